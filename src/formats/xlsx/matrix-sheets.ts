/**
 * The Matrix and Offers sheets of the summary workbook (CONTRACT §7). Each reads the price
 * list once more when the archive reaches it, so no sheet holds the products.
 */
import type { ExportColumn } from '../../model/columns.js';
import { compareToOurs, distinctCompetitors, priceDifference, productFigures, type Comparison } from '../matrix-figures.js';
import type { Competitor, PriceItem } from '../../model/price-item.js';
import { columnWidth, writeColumnCell, writeHeaderRow, writeMoneyCell } from './export-cells.js';
import { MAX_COLUMNS, type CapturedCells, type SheetRows } from './sheet-xml.js';
import { Style, type StyleId } from './styles.js';
import { tableSheets } from './table-sheets.js';
import type { SheetSpec } from './workbook.js';

export const NO_COMPETITORS_NOTE = 'No competitor prices in this price list';

export const MATRIX_FIGURE_TITLES = ['min', 'avg', 'max', 'rank', 'gap_to_min_%'] as const;
export const OFFER_TITLES = ['competitor', 'competitor_price', 'competitor_available', 'difference', 'difference_%'] as const;

const FILL: Record<Comparison, StyleId> = { cheaper: Style.cheaper, equal: Style.equal, dearer: Style.dearer };

export interface MatrixLayout {
  /** Product columns, left of the competitor columns and in Offers; they always include our price. */
  products: readonly ExportColumn[];
  /** Every competitor, in the order of CONTRACT §7. */
  competitors: readonly string[];
  readBatches: () => AsyncIterable<readonly PriceItem[]>;
  /** Products in the list (Matrix rows). */
  productCount: number;
  /** Products × the competitors that price them (Offers rows). */
  offerCount: number;
}

/** The competitors that `position` knows, each with its position, in that order. */
function placedCompetitors(competitors: readonly Competitor[], position: ReadonlyMap<string, number>): [number, Competitor][] {
  const placed: [number, Competitor][] = [];
  for (const competitor of competitors) {
    const at = position.get(competitor.name);
    if (at !== undefined) placed.push([at, competitor]);
  }
  // Most items list a handful of competitors: sorting them beats walking every column.
  return placed.length > 1 ? placed.sort((a, b) => a[0] - b[0]) : placed;
}

const competitorWidth = (name: string): number => Math.min(Math.max(name.length + 2, 11), 24);
/** Both sheets keep the header and the product's first two columns (offer_id, name) in view. */
const freezeFor = (layout: MatrixLayout) => ({ rows: 1, columns: Math.min(2, layout.products.length) });

/** The Matrix: one row per product; `Matrix (2)`… past Excel's last row. */
export function matrixSheets(layout: MatrixLayout): SheetSpec[] {
  const { products } = layout;
  // The sheet ends at Excel's last column; competitors beyond it show in Offers and Summary only.
  const room = MAX_COLUMNS - products.length - MATRIX_FIGURE_TITLES.length;
  const shown = layout.competitors.slice(0, Math.max(room, 0));
  const position = new Map(shown.map((name, i) => [name, i]));
  const header = [...products.map((c) => c.title), ...shown, ...MATRIX_FIGURE_TITLES];
  const columnWidths = [...products.map(columnWidth), ...shown.map(competitorWidth), 12, 12, 12, 7, 14];

  if (shown.length === 0) {
    return [{
      name: 'Matrix',
      columnWidths,
      freeze: freezeFor(layout),
      async *write(rows: SheetRows) {
        writeHeaderRow(rows, header);
        rows.startRow().text(NO_COMPETITORS_NOTE).endRow();
      },
    }];
  }

  return tableSheets<PriceItem>({
    name: 'Matrix',
    header,
    expectedRows: layout.productCount,
    batches: layout.readBatches,
    columnWidths,
    freeze: freezeFor(layout),
    autoFilter: true,
    writeRow(rows, item) {
      const competitors = distinctCompetitors(item);
      rows.startRow();
      for (const column of products) writeColumnCell(rows, column, item);
      let next = 0;
      for (const [at, competitor] of placedCompetitors(competitors, position)) {
        rows.skip(at - next);
        writeMoneyCell(rows, competitor.price, FILL[compareToOurs(competitor.price, item.price)]);
        next = at + 1;
      }
      rows.skip(shown.length - next);
      // Min/avg/max/rank count every competitor of the product, shown in a column or not.
      const figures = productFigures(item.price, competitors);
      if (figures.count === 0) {
        rows.skip(MATRIX_FIGURE_TITLES.length);
      } else {
        writeMoneyCell(rows, figures.min!);
        writeMoneyCell(rows, Math.round(figures.avg!)); // to the cent, as it shows
        writeMoneyCell(rows, figures.max!);
        rows.number(figures.rank!, Style.integer);
        if (figures.gapToMinPercent === null) rows.skip();
        else rows.number(figures.gapToMinPercent, Style.percent);
      }
      rows.endRow();
    },
  });
}

type Offer = readonly [PriceItem, Competitor];

/** One row per product × competitor, competitors in the matrix's order; `Offers (2)`… past Excel's last row. */
export function offersSheets(layout: MatrixLayout): SheetSpec[] {
  const { products } = layout;
  const position = new Map(layout.competitors.map((name, i) => [name, i]));

  async function* offers(): AsyncGenerator<readonly Offer[]> {
    for await (const batch of layout.readBatches()) {
      const offers: Offer[] = [];
      for (const item of batch) {
        for (const [, competitor] of placedCompetitors(distinctCompetitors(item), position)) offers.push([item, competitor]);
      }
      yield offers;
    }
  }

  // A product's cells are built on its first row and repeated on the others.
  let lastItem: PriceItem | null = null;
  let productCells: CapturedCells | null = null;

  return tableSheets<Offer>({
    name: 'Offers',
    header: [...products.map((c) => c.title), ...OFFER_TITLES],
    expectedRows: layout.offerCount,
    batches: offers,
    columnWidths: [...products.map(columnWidth), 24, 16, 20, 12, 13],
    freeze: freezeFor(layout),
    autoFilter: true,
    writeRow(rows, [item, competitor]) {
      rows.startRow();
      if (item === lastItem && productCells) {
        rows.repeat(productCells);
      } else {
        productCells = rows.capture(() => products.forEach((column) => writeColumnCell(rows, column, item)));
        lastItem = item;
      }
      rows.text(competitor.name);
      writeMoneyCell(rows, competitor.price, FILL[compareToOurs(competitor.price, item.price)]);
      if (competitor.available === null) rows.skip();
      else rows.boolean(competitor.available);
      const difference = priceDifference(item.price, competitor.price);
      writeMoneyCell(rows, difference.amount);
      if (difference.percent === null) rows.skip();
      else rows.number(difference.percent, Style.percent);
      rows.endRow();
    },
  });
}
