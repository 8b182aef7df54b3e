import type Database from 'better-sqlite3';
import type { PriceItem } from '../../model/price-item.js';
import type { DuplicateOffer, SequencedItem } from '../types.js';
import { extraJson, ITEM_COLUMNS } from '../item-row.js';
import { quoteFree } from '../quote-free.js';

/**
 * One price_items row: OR IGNORE + `changes` finds duplicate offer_ids through the unique
 * index, without a Set of ids in memory.
 */
export const INSERT_ITEM_SQL = `INSERT OR IGNORE INTO price_items (price_list_id, seq, ${ITEM_COLUMNS}, quote_free) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** The values of INSERT_ITEM_SQL for one item (seq second: the append thread reports it back). */
export function itemInsertValues(priceListId: number, seq: number, item: PriceItem): unknown[] {
  return [
    priceListId, seq, item.offer_id, item.name, item.price, item.old_price, item.currency,
    item.available ? 1 : 0, item.quantity, item.url, extraJson(item),
    quoteFree(item),
  ];
}

/** Inserts a draft's items with INSERT_ITEM_SQL; answers each one the unique offer_id index turned away. */
export function insertItems(insert: Database.Statement, draftId: number, items: readonly SequencedItem[]): DuplicateOffer[] {
  const refused: DuplicateOffer[] = [];
  for (const { seq, item } of items) if (insert.run(itemInsertValues(draftId, seq, item)).changes === 0) refused.push({ seq, offer_id: item.offer_id });
  return refused;
}
