/**
 * How an export column (legacy or a profile's) becomes a cell, shared by the Prices sheet and
 * the product columns of the summary matrix.
 */
import type { ExportColumn } from '../../model/columns.js';
import { formatMoney, type Cents } from '../../model/money.js';
import type { PriceItem } from '../../model/price-item.js';
import { escapeFormula } from '../../model/formula-escape.js';
import type { SheetRows } from './sheet-xml.js';
import { Style, type StyleId } from './styles.js';

/**
 * Writes one column's value of `item`. Money is a number in major units with the `0.00`
 * format; integers are numbers; booleans are TRUE/FALSE cells (not 1/0: they filter and read
 * back as booleans — openpyxl `True`, exceljs `true`); text is an inline string; absent is an
 * empty cell. `escapeFormulas` (a profile's option) prefixes formula-like text with `'`.
 */
export function writeColumnCell(rows: SheetRows, column: ExportColumn, item: PriceItem, escapeFormulas = false): void {
  const value = column.get(item);
  if (value === null || value === undefined) {
    rows.skip();
  } else if (typeof value === 'number') {
    if (column.kind === 'money') writeMoneyCell(rows, value);
    else rows.number(value, column.kind === 'integer' ? Style.integer : Style.default);
  } else if (typeof value === 'boolean') {
    rows.boolean(value);
  } else {
    rows.text(escapeFormulas ? escapeFormula(value) : value);
  }
}

/**
 * An amount in minor units as a `0.00` number cell, printed from the integer (`1990.50`)
 * rather than from `cents / 100`: exact, and cheaper than printing a double. Negative
 * amounts (differences) are fine.
 */
export function writeMoneyCell(rows: SheetRows, cents: Cents, style: StyleId = Style.decimal): void {
  if (!Number.isSafeInteger(cents)) rows.number(cents / 100, style);
  else rows.numberText(cents < 0 ? `-${formatMoney(-cents)}` : formatMoney(cents), style);
}

/** The bold header row. */
export function writeHeaderRow(rows: SheetRows, titles: readonly string[]): void {
  rows.startRow();
  for (const title of titles) rows.text(title, Style.header);
  rows.endRow();
}

/** Widths that fit a typical value of the field; the rows stream past, so none is measured. */
const FIELD_WIDTHS: Record<string, number> = {
  offer_id: 14, name: 48, description: 60, category: 32, url: 40, picture: 40, vendor: 18, vendor_code: 16, barcode: 16, currency: 9,
};
const KIND_WIDTHS = { text: 20, money: 12, integer: 10, boolean: 10 } as const;

/** Readable width of a column, in characters: room for its title and a typical value. */
export function columnWidth(column: ExportColumn): number {
  const typical = (column.field !== null ? FIELD_WIDTHS[column.field] : undefined) ?? KIND_WIDTHS[column.kind];
  return Math.min(Math.max(typical, column.title.length + 2), 60);
}
