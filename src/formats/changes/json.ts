import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import { jsonItemLayout, jsonWriter } from '../json.js';
import type { TextLayout } from '../text-writer.js';
import { textChangesWriter } from './text-changes-writer.js';

/*
 * CONTRACT §11, json: {"since": N, "version": M, "published_at": …, "changed": [items as §6
 * json], "removed": ["offer_id", …]}, streamed: the items one per line as the full export
 * prints them, then the removed offer_ids one per line.
 */

function changesLayout(meta: ChangesMeta): TextLayout<ChangeEntry> {
  const items = jsonItemLayout(meta);
  const { priceList } = meta;
  let changed = 0;
  let removed = 0;
  // Closes "changed" and opens "removed" (the array ends on its own line when it has items).
  const between = () => `${changed === 0 ? '' : '\n'}],"removed":[`;
  return {
    header: `{"since":${meta.since},"version":${priceList.version},"published_at":${JSON.stringify(priceList.publishedAt.toISOString())},"changed":[`,
    row(entry) {
      if (entry.action === 'upsert') return items.row(entry.item, changed++);
      return `${removed++ === 0 ? `${between()}\n` : ',\n'}${JSON.stringify(entry.item.offer_id)}`;
    },
    get footer() {
      return removed === 0 ? `${between()}]}\n` : '\n]}\n';
    },
  };
}

export const jsonChangesWriter: ChangesWriter = textChangesWriter({
  format: 'json',
  extension: 'json',
  needs: jsonWriter.needs,
  contentType: (meta) => jsonWriter.contentType(meta),
  items: jsonItemLayout,
  changes: changesLayout,
});
