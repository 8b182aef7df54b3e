import { LEGACY_COLUMNS } from '../../model/columns.js';
import type { ChangeEntry, ChangesMeta, ChangesWriter } from '../../model/changes-writer.js';
import type { ExportWriter } from '../../model/export-writer.js';
import { csvWriter, delimitedLayout, legacyLayout, optionsFor, quoter, RECORD_END, tsvWriter } from '../delimited.js';
import type { TextLayout } from '../text-writer.js';
import { textChangesWriter } from './text-changes-writer.js';

/*
 * CONTRACT §11, csv/tsv: the export's columns (and its delimiter, encoding, BOM and header
 * option) plus a last column `_action`: `upsert` rows as the full export prints them, then
 * `delete` rows that carry only their offer_id.
 */

const ACTION_TITLE = '_action';

function itemRows(meta: ChangesMeta, format: 'csv' | 'tsv'): TextLayout {
  const options = optionsFor(meta, format);
  return meta.legacy && meta.columns === LEGACY_COLUMNS ? legacyLayout(options.delimiter) : delimitedLayout(meta.columns, options);
}

function changesLayout(meta: ChangesMeta, format: 'csv' | 'tsv'): TextLayout<ChangeEntry> {
  const options = optionsFor(meta, format);
  const { delimiter } = options;
  const rows = itemRows(meta, format);
  const quote = quoter(delimiter);
  // A delete row: empty cells but the offer_id's (the domain makes sure there is one).
  const deleteCells = meta.columns.map((column) => (column.field === 'offer_id' ? quote : () => ''));
  const withAction = (record: string, action: string) => record.slice(0, -RECORD_END.length) + delimiter + action + RECORD_END;
  return {
    header: rows.header === '' ? '' : withAction(rows.header, ACTION_TITLE),
    row(entry) {
      if (entry.action === 'upsert') return withAction(rows.row(entry.item, 0), 'upsert');
      return deleteCells.map((cell) => cell(entry.item.offer_id)).join(delimiter) + delimiter + 'delete' + RECORD_END;
    },
    footer: '',
  };
}

function delimitedChangesWriter(format: 'csv' | 'tsv', full: ExportWriter): ChangesWriter {
  return textChangesWriter({
    format,
    extension: format,
    needs: full.needs,
    contentType: (meta) => full.contentType(meta),
    items: (meta) => itemRows(meta, format),
    changes: (meta) => changesLayout(meta, format),
    encoding: (meta) => optionsFor(meta, format),
  });
}

export const csvChangesWriter = delimitedChangesWriter('csv', csvWriter);
export const tsvChangesWriter = delimitedChangesWriter('tsv', tsvWriter);
