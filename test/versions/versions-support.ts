import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { publishPriceList, readPublication, type PublishOptions, type PublishedVersion } from '../../src/domain/publishing.js';
import { createStore } from '../../src/domain/stores.js';
import type { PriceItem } from '../../src/model/price-item.js';
import type { Database } from '../../src/store/types.js';

/** A store with a fresh id. */
export async function newStore(db: Database): Promise<string> {
  const id = `v-${randomBytes(4).toString('hex')}`;
  await createStore(db, { id, name: `Store ${id}` });
  return id;
}

export interface ItemInput { offer_id: string; name?: string; price: number | string; [field: string]: unknown }

/** `count` items `A0…` priced 100.00 each (or by `price(i)`). */
export const items = (count: number, price: (i: number) => number | string = () => 100, prefix = 'A'): ItemInput[] =>
  Array.from({ length: count }, (_, i) => ({ offer_id: `${prefix}${i}`, name: `Item ${prefix}${i}`, price: price(i) }));

export async function publish(db: Database, storeId: string, list: readonly ItemInput[], options: PublishOptions = {}): Promise<PublishedVersion> {
  const rows = list.map((it) => ({ name: `Item ${it.offer_id}`, ...it }));
  return publishPriceList(db, storeId, readPublication(db, Readable.from([Buffer.from(JSON.stringify(rows))]), 'json'), options);
}

/** Every item of a list (test-sized lists only). */
export async function readList(db: Database, itemsListId: number): Promise<PriceItem[]> {
  const all: PriceItem[] = [];
  for await (const batch of db.priceLists.readItems(itemsListId, { onlyAvailable: false })) all.push(...batch);
  return all;
}

/** offer_id → price text of a list, in list order. */
export async function prices(db: Database, itemsListId: number): Promise<[string, number][]> {
  return (await readList(db, itemsListId)).map((it) => [it.offer_id, it.price]);
}
