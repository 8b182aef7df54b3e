import type { PriceItem } from '../../model/price-item.js';

/**
 * "Changed" as CONTRACT §11 means it: an item whose row prints differently with the export's
 * columns, or whose price moved (a price change counts for every profile). Printing both rows
 * is exact for any format and profile, and costs only what changed: only the offers recorded
 * as touched are compared.
 */
export const printsAlike =
  (row: (item: PriceItem) => string) =>
  (a: PriceItem, b: PriceItem): boolean =>
    a.price === b.price && row(a) === row(b);
