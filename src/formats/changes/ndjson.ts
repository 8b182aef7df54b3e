import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import { jsonItemLayout, jsonWriter } from '../json.js';
import type { TextLayout } from '../text-writer.js';
import { textChangesWriter } from './text-changes-writer.js';

/*
 * CONTRACT §11, ndjson: one item per line (as §6 json prints it), then one line
 * {"removed": [...]} — also when nothing was removed, so a reader knows the answer is whole.
 */

function changesLayout(meta: ChangesMeta): TextLayout<ChangeEntry> {
  const items = jsonItemLayout(meta);
  let removed = 0;
  return {
    header: '',
    row(entry) {
      // The JSON layout's row for a first item is "\n{…}": the object, moved to the end of its line.
      if (entry.action === 'upsert') return `${items.row(entry.item, 0).slice(1)}\n`;
      return `${removed++ === 0 ? '{"removed":[' : ','}${JSON.stringify(entry.item.offer_id)}`;
    },
    get footer() {
      return removed === 0 ? '{"removed":[]}\n' : ']}\n';
    },
  };
}

export const ndjsonChangesWriter: ChangesWriter = textChangesWriter({
  format: 'ndjson',
  extension: 'ndjson',
  needs: jsonWriter.needs,
  contentType: () => 'application/x-ndjson; charset=utf-8',
  items: jsonItemLayout,
  changes: changesLayout,
});
