/**
 * The summary matrix workbook of CONTRACT §7: sheets Matrix, Offers and Summary.
 *
 * The price list is read several times rather than held: a first pass tallies the
 * competitors (their order and every Summary figure), then the Matrix and the Offers sheets
 * each read it again as the archive reaches them. Memory grows with the number of
 * competitors, never with the number of products.
 */
import { profileColumns, type ExportColumn } from '../../model/columns.js';
import { MatrixSummaryBuilder, type MatrixSummary } from '../matrix-figures.js';
import type { PriceItem } from '../../model/price-item.js';
import type { ExportMeta, ExportWriter } from '../../model/export-writer.js';
import { writeHeaderRow } from './export-cells.js';
import { matrixSheets, NO_COMPETITORS_NOTE, offersSheets, type MatrixLayout } from './matrix-sheets.js';
import { XLSX_CONTENT_TYPE } from './prices-writer.js';
import type { SheetRows } from './sheet-xml.js';
import { Style } from './styles.js';
import { renderWorkbook, type SheetSpec } from './workbook.js';

export const SUMMARY_CONTENT_TYPE = XLSX_CONTENT_TYPE;

export const SUMMARY_TITLES = ['competitor', 'products_priced', 'cheaper', 'equal', 'dearer', 'price_index'] as const;

/** Product columns without a profile (CONTRACT §7). */
const DEFAULT_PRODUCT_COLUMNS = profileColumns(
  ['offer_id', 'name', 'vendor', 'category', 'price', 'old_price'].map((field) => ({ field, title: field })),
);
const OUR_PRICE_COLUMN = profileColumns([{ field: 'price', title: 'price' }])[0]!;

/**
 * The legacy product columns, or the profile's. Competitor prices mean little without ours
 * beside them, so a profile without `price` gets our price appended as a last product column.
 */
export function matrixProductColumns(meta: ExportMeta): readonly ExportColumn[] {
  const columns = meta.legacy ? DEFAULT_PRODUCT_COLUMNS : meta.columns;
  return columns.some((column) => column.field === 'price') ? columns : [...columns, OUR_PRICE_COLUMN];
}

/** What the figures mean, written under them for whoever opens the file. */
const NOTES = [
  'Every competitor price counts, whatever its availability.',
  'cheaper / equal / dearer: products where the competitor\'s price is below, equal to, above ours (red, yellow, green in Matrix and Offers).',
  'price_index: the competitor\'s price ÷ ours × 100, averaged over the products it prices; products we sell at 0 are left out. Below 100: it is cheaper than us.',
  'market_index: our price ÷ the competitors\' average × 100, averaged over products with competitor prices. Above 100: we are dearer than the market.',
  'rank: 1 + the number of competitors strictly cheaper than us. gap_to_min_%: (our price − min) ÷ min × 100.',
  'difference (Offers): our price − the competitor\'s; difference_%: that difference ÷ the competitor\'s price × 100.',
];

const twoDecimals = (value: number): number => Math.round(value * 100) / 100;

function labelRow(rows: SheetRows, label: string, write: (rows: SheetRows) => void): void {
  rows.startRow().text(label, Style.bold);
  write(rows);
  rows.endRow();
}

function summarySheet(summary: MatrixSummary, meta: ExportMeta): SheetSpec {
  return {
    name: 'Summary',
    columnWidths: [34, 16, 10, 10, 10, 12],
    freeze: { rows: 1, columns: 0 },
    async *write(rows: SheetRows) {
      writeHeaderRow(rows, SUMMARY_TITLES);
      if (summary.competitors.length === 0) rows.startRow().text(NO_COMPETITORS_NOTE).endRow();
      for (const competitor of summary.competitors) {
        rows.startRow().text(competitor.name);
        rows.number(competitor.productsPriced, Style.integer);
        rows.number(competitor.cheaper, Style.integer).number(competitor.equal, Style.integer).number(competitor.dearer, Style.integer);
        if (competitor.priceIndex === null) rows.skip();
        else rows.number(twoDecimals(competitor.priceIndex), Style.percent);
        rows.endRow();
        if (rows.full) yield;
      }

      const { store } = summary;
      rows.startRow().endRow();
      labelRow(rows, 'store', (r) => r.text(`${meta.store.name} (${meta.store.id})`));
      labelRow(rows, 'price_list_version', (r) => r.number(meta.priceList.version, Style.integer));
      labelRow(rows, 'published_at', (r) => r.text(meta.priceList.publishedAt.toISOString()));
      labelRow(rows, 'products', (r) => r.number(store.products, Style.integer));
      labelRow(rows, 'products_with_competitor_prices', (r) => r.number(store.productsWithCompetitorPrices, Style.integer));
      labelRow(rows, 'products_ranked_first', (r) => r.number(store.productsRankedFirst, Style.integer));
      labelRow(rows, 'market_index', (r) => (store.marketIndex === null ? r.skip() : r.number(twoDecimals(store.marketIndex), Style.percent)));
      rows.startRow().endRow();
      for (const note of NOTES) rows.startRow().text(note).endRow();
    },
  };
}

/**
 * Renders the workbook. `readBatches` gives the list's items (after any filter) from the
 * start each time it is called; it is called three times.
 */
export async function* renderSummaryMatrix(
  readBatches: () => AsyncIterable<readonly PriceItem[]>,
  meta: ExportMeta,
): AsyncGenerator<Uint8Array> {
  const builder = new MatrixSummaryBuilder();
  for await (const batch of readBatches()) for (const item of batch) builder.add(item);
  const summary = builder.result();

  const layout: MatrixLayout = {
    products: matrixProductColumns(meta),
    competitors: summary.competitors.map((competitor) => competitor.name),
    readBatches,
    productCount: summary.store.products,
    offerCount: summary.competitors.reduce((sum, competitor) => sum + competitor.productsPriced, 0),
  };
  yield* renderWorkbook([...matrixSheets(layout), ...offersSheets(layout), summarySheet(summary, meta)], {
    modified: meta.priceList.publishedAt,
  });
}

/** The summary workbook as the export path sees it (address 3): the items it is given are read once per pass. */
export const summaryWriter: ExportWriter = {
  format: 'xlsx',
  extension: 'xlsx',
  fileSuffix: '-summary',
  // Competitors and the product columns beyond the legacy ones: every field.
  needs: { fields: 'all', categories: false },
  contentType: () => SUMMARY_CONTENT_TYPE,
  render: (items, meta) => renderSummaryMatrix(() => items, meta),
};
