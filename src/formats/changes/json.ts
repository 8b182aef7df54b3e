import type { BuiltChanges, ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import type { JsonRecordSpec } from '../../model/json-record.js';
import { jsonItemLayout, jsonRecordSpec, jsonWriter, withoutFirstSeparator } from '../json.js';
import type { TextLayout } from '../text-writer.js';
import { textChangesWriter } from './text-changes-writer.js';

/*
 * CONTRACT §11, json: {"since": N, "version": M, "published_at": …, "changed": [items as §6
 * json], "removed": ["offer_id", …]}, streamed: the items one per line as the full export
 * prints them, then the removed offer_ids one per line.
 */

/** Closes "changed" and opens "removed" (an array ends on its own line when it has items). */
const removedOpening = (changedAny: boolean): string => `${changedAny ? '\n' : ''}],"removed":[`;
const closing = (removedAny: boolean): string => `${removedAny ? '\n' : ''}]}\n`;

const changesHeader = ({ since, priceList }: ChangesMeta): string =>
  `{"since":${since},"version":${priceList.version},"published_at":${JSON.stringify(priceList.publishedAt.toISOString())},"changed":[`;

function changesLayout(meta: ChangesMeta): TextLayout<ChangeEntry> {
  const items = jsonItemLayout(meta);
  let changed = 0;
  let removed = 0;
  const between = () => removedOpening(changed > 0);
  return {
    header: changesHeader(meta),
    row(entry) {
      if (entry.action === 'upsert') return items.row(entry.item, changed++);
      return `${removed++ === 0 ? `${between()}\n` : ',\n'}${JSON.stringify(entry.item.offer_id)}`;
    },
    get footer() {
      return `${removed === 0 ? between() : ''}${closing(removed > 0)}`;
    },
  };
}

/** A removed offer as the store builds it: `,\n"offer_id"` (the first one's comma dropped, as the items'). */
const REMOVED_ID: JsonRecordSpec = { format: 'json', parts: [{ kind: 'literal', text: ',\n' }, { kind: 'text', field: 'offer_id' }] };

/** The layout's bytes from store-built records: the upserts' items as the full export's, then the removed offer_ids. */
function builtChanges(meta: ChangesMeta): BuiltChanges | null {
  const changed = jsonRecordSpec(meta.columns);
  if (changed === null) return null;
  return {
    changed,
    removed: REMOVED_ID,
    async *render(changedRecords, removedRecords) {
      yield Buffer.from(changesHeader(meta), 'utf8');
      let changedAny = false;
      for await (const chunk of withoutFirstSeparator(changedRecords)) {
        changedAny = true;
        yield chunk;
      }
      yield Buffer.from(removedOpening(changedAny), 'utf8');
      let removedAny = false;
      for await (const chunk of withoutFirstSeparator(removedRecords)) {
        removedAny = true;
        yield chunk;
      }
      yield Buffer.from(closing(removedAny), 'utf8');
    },
  };
}

const jsonTextChangesWriter = textChangesWriter({
  format: 'json',
  extension: 'json',
  needs: jsonWriter.needs,
  contentType: (meta) => jsonWriter.contentType(meta),
  items: jsonItemLayout,
  changes: changesLayout,
});

export const jsonChangesWriter: ChangesWriter = { ...jsonTextChangesWriter, built: builtChanges };
