import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import { jsonItemLayout } from '../json.js';
import { renderText, UTF8_NO_BOM, type TextLayout } from '../text-writer.js';
import { printsAlike } from './same-shown.js';

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

export const jsonChangesWriter: ChangesWriter = {
  format: 'json',
  extension: 'json',
  needs: { fields: 'columns', categories: false },
  contentType: () => 'application/json; charset=utf-8',
  sameShown(meta) {
    const items = jsonItemLayout(meta);
    return printsAlike((item) => items.row(item, 1));
  },
  render: (entries, meta) => renderText(entries, changesLayout(meta), UTF8_NO_BOM),
};
