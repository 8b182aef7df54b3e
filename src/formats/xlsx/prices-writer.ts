import type { PriceItem } from '../../model/price-item.js';
import type { ExportMeta, ExportWriter } from '../../model/export-writer.js';
import { columnWidth, writeColumnCell } from './export-cells.js';
import { tableSheets } from './table-sheets.js';
import { renderWorkbook } from './workbook.js';

export const XLSX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/**
 * CONTRACT §6 xlsx: one sheet `Prices`, the bold header row frozen, an autofilter, money as
 * numbers with two decimals, text as text. The profile's `header` option is a csv/tsv option:
 * the workbook always has its header row. Rows beyond Excel's 1,048,575 continue on a sheet
 * `Prices (2)`: a file with them on one sheet would not load completely.
 */
export const xlsxWriter: ExportWriter = {
  format: 'xlsx',
  extension: 'xlsx',
  needs: { fields: 'columns', categories: false },
  contentType: () => XLSX_CONTENT_TYPE,
  render(batches: AsyncIterable<readonly PriceItem[]>, meta: ExportMeta): AsyncIterable<Uint8Array> {
    const columns = meta.columns;
    // The legacy layout never escapes (CONTRACT §14).
    const escapeFormulas = !meta.legacy && meta.tabular.escape_formulas === true;
    // A list longer than a sheet continues on `Prices (2)`: see table-sheets.ts.
    const sheets = tableSheets<PriceItem>({
      name: 'Prices',
      header: columns.map((column) => column.title),
      expectedRows: meta.priceList.itemCount,
      batches: () => batches,
      columnWidths: columns.map(columnWidth),
      freeze: { rows: 1, columns: 0 },
      autoFilter: true,
      writeRow(rows, item) {
        rows.startRow();
        for (const column of columns) writeColumnCell(rows, column, item, escapeFormulas);
        rows.endRow();
      },
    });
    return renderWorkbook(sheets, { modified: meta.priceList.publishedAt });
  },
};
