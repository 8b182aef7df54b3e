import type { PriceItem } from '../../src/model/price-item.js';
import type { Database } from '../../src/store/types.js';

const item = (offer_id: string): PriceItem => ({
  offer_id, name: offer_id, price: 100, old_price: null, purchase_price: null, currency: 'RUB', available: true, quantity: null,
  url: null, picture: null, vendor: null, vendor_code: null, barcode: null, description: null, category: null, competitors: null, attributes: null,
});

/** Publishes a list of one item straight through the store (what a look-up test needs of a publication). */
export async function publishOneItem(db: Database, storeId: string) {
  const draft = await db.priceLists.beginPublication(storeId);
  await draft.append([{ seq: 0, item: item('a') }]);
  return draft.commit({ item_count: 1, available_count: 1, currencies: ['RUB'], category_paths: [''] });
}
