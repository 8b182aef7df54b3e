import type { ExportColumn } from '../../model/columns.js';
import { ITEM_FIELDS, isItemField, type PriceItem } from '../../model/price-item.js';
import type { RecordReader } from '../../model/record-spec.js';
import type { SheetRowCell, SheetRowSpec } from '../../model/sheet-row.js';
import type { ExportMeta, RecordSourceWriter } from '../../model/export-writer.js';
import { NO_ITEM } from '../text-writer.js';
import { columnWidth, writeColumnCell, writeHeaderRow } from './export-cells.js';
import { columnLetter, openingsOf, SheetRows, VALUE_CELL_CLOSE } from './sheet-xml.js';
import { Style } from './styles.js';
import { MAX_ROWS, tableSheets } from './table-sheets.js';
import { renderWorkbook, type SheetSpec } from './workbook.js';

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const SHEET_NAME = 'Prices';

/**
 * CONTRACT §6 xlsx: one sheet `Prices`, the bold header row frozen, an autofilter, money as
 * numbers with two decimals, text as text. The profile's `header` option is a csv/tsv option:
 * the workbook always has its header row. Rows beyond Excel's 1,048,575 continue on a sheet
 * `Prices (2)`: a file with them on one sheet would not load completely.
 *
 * The rows may be built by the store next to the items (model/sheet-row.ts), which the export
 * takes when every column is a stored field or a constant and the list fits one sheet; the
 * JavaScript rows are the reference and the fallback.
 */
export const xlsxWriter: RecordSourceWriter = {
  format: 'xlsx',
  extension: 'xlsx',
  needs: { fields: 'columns', categories: false },
  takesRecordSource: true,
  contentType: () => XLSX_CONTENT_TYPE,
  render(batches: AsyncIterable<readonly PriceItem[]>, meta: ExportMeta, records?: RecordReader | null): AsyncIterable<Uint8Array> {
    const columns = meta.columns;
    // The legacy layout never escapes (CONTRACT §14).
    const escapeFormulas = !meta.legacy && meta.tabular.escape_formulas === true;
    const layout = {
      name: SHEET_NAME,
      columnWidths: columns.map(columnWidth),
      freeze: { rows: 1, columns: 0 },
      autoFilter: true,
    };
    const header = columns.map((column) => column.title);
    const modified = meta.priceList.publishedAt;
    // The store's rows fill one sheet: a list that may need a second takes the JavaScript rows.
    const spec = records && meta.priceList.itemCount < MAX_ROWS ? sheetRowSpec(columns, escapeFormulas) : null;
    const built = records && spec ? records(spec) : null;
    if (built) return renderWorkbook([builtSheet(layout, header, built)], { modified });
    // A list longer than a sheet continues on `Prices (2)`: see table-sheets.ts.
    const sheets = tableSheets<PriceItem>({
      ...layout,
      header,
      expectedRows: meta.priceList.itemCount,
      batches: () => batches,
      writeRow(rows, item) {
        rows.startRow();
        for (const column of columns) writeColumnCell(rows, column, item, escapeFormulas);
        rows.endRow();
      },
    });
    return renderWorkbook(sheets, { modified });
  },
};

/**
 * The data rows as a spec a store may build itself: each column's cell as writeColumnCell writes
 * it, a constant's as a literal; null when a column reads what a spec cannot name (an
 * attribute), or when the header leaves its last column empty (the filter's width would then
 * depend on the rows).
 */
export function sheetRowSpec(columns: readonly ExportColumn[], escapeFormulas: boolean): SheetRowSpec | null {
  if (columns.length === 0 || columns[columns.length - 1]!.title === '') return null;
  const cells: SheetRowCell[] = [];
  for (const [index, column] of columns.entries()) {
    const letters = columnLetter(index);
    if (column.field === null) {
      const rows = new SheetRows().startRow().skip(index);
      const { cells: captured } = rows.capture((row) => writeColumnCell(row, column, NO_ITEM, escapeFormulas));
      if (captured.length > 0) cells.push({ kind: 'literal', column: letters, tail: captured[1] as string });
      continue;
    }
    if (!isItemField(column.field) || column.kind !== ITEM_FIELDS[column.field]) return null;
    const field = column.field;
    switch (column.kind) {
      case 'text': {
        const open = openingsOf(Style.default);
        cells.push({ kind: 'text', field, column: letters, open: open.text, openPreserved: open.textPreserved });
        break;
      }
      case 'money':
        cells.push({ kind: 'money', field, column: letters, open: openingsOf(Style.decimal).number, close: VALUE_CELL_CLOSE });
        break;
      case 'integer':
        cells.push({ kind: 'integer', field, column: letters, open: openingsOf(Style.integer).number, close: VALUE_CELL_CLOSE });
        break;
      case 'boolean':
        cells.push({ kind: 'boolean', field, column: letters, open: openingsOf(Style.default).boolean, close: VALUE_CELL_CLOSE });
        break;
    }
  }
  return { format: 'sheet-row', firstRow: 2, cells, escapeFormulas };
}

/** The Prices sheet: the header written here, then the store's rows as they come. */
function builtSheet(layout: Omit<SheetSpec, 'write'>, header: readonly string[], built: AsyncIterable<Uint8Array>): SheetSpec {
  return {
    ...layout,
    async *write(rows: SheetRows) {
      writeHeaderRow(rows, header);
      let last: Uint8Array | null = null;
      for await (const chunk of built) {
        if (chunk.length === 0) continue;
        yield chunk;
        last = chunk;
      }
      // Every column has its header cell (sheetRowSpec), so the rows are no wider than the header.
      if (last) rows.followedBy(lastRowNumber(last), header.length);
    },
  };
}

const ROW_START = Buffer.from('<row r="', 'latin1');

/** The number of the last row in chunks of whole rows (`<row r="N">…</row>`). */
export function lastRowNumber(chunk: Uint8Array): number {
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const at = bytes.lastIndexOf(ROW_START);
  const end = bytes.indexOf(0x22, at + ROW_START.length);
  const number = at < 0 || end < 0 ? NaN : Number(bytes.toString('latin1', at + ROW_START.length, end));
  if (!Number.isSafeInteger(number)) throw new Error('the sheet rows a store built end with no row');
  return number;
}
