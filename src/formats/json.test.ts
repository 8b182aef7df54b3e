import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { profileColumns } from '../model/columns.js';
import { jsonWriter } from './json.js';
import { buildMeta, collectChunks, inBatches, legacySample, normalizeItem, renderToBuffer } from '../../test/support/format-items.js';

interface JsonExport {
  store: Record<string, unknown>;
  price_list: Record<string, unknown>;
  items: Record<string, unknown>[];
}

const read = async (...args: Parameters<typeof renderToBuffer>): Promise<JsonExport> =>
  JSON.parse((await renderToBuffer(...args)).toString('utf8')) as JsonExport;

const LEGACY_KEYS = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'];

describe('json writer', () => {
  const { items } = legacySample();

  it('carries the store, the price list and the legacy columns', async () => {
    const output = await read(jsonWriter, items);
    assert.deepEqual(output.store, { id: 'demo-shop', name: 'Demo Shop', currency: 'RUB', url: 'https://demo-shop.example', company: null });
    assert.deepEqual(output.price_list, { version: 7, published_at: '2026-11-22T07:00:00.000Z', currency: 'RUB', item_count: 12 });
    assert.deepEqual(Object.keys(output), ['store', 'price_list', 'items']);
    assert.deepEqual(
      output.items.map((item) => item.offer_id),
      items.map((item) => item.offer_id),
    );
    for (const item of output.items) assert.deepEqual(Object.keys(item), LEGACY_KEYS);
    assert.equal(jsonWriter.contentType(buildMeta(items)), 'application/json; charset=utf-8');
    assert.equal(jsonWriter.extension, 'json');
  });

  it('writes money as numbers, available as a boolean, absent values as null', async () => {
    const byId = new Map((await read(jsonWriter, items)).items.map((item) => [item.offer_id, item]));
    assert.deepEqual(byId.get('A-100'), {
      offer_id: 'A-100',
      name: 'Смартфон «Галактика» 128 ГБ',
      price: 19990,
      old_price: 21990,
      currency: 'RUB',
      available: true,
      quantity: 7,
      url: 'https://demo-shop.example/p/a-100',
    });
    assert.deepEqual(byId.get('A-101'), { offer_id: 'A-101', name: 'Case, black', price: 799.5, old_price: null, currency: 'RUB', available: false, quantity: 0, url: null });
    assert.equal(byId.get('A-106')?.price, 0.5);
    assert.equal(byId.get('A-106')?.currency, 'USD');
    assert.equal(byId.get('A-108')?.price, 1234567.89);
    assert.equal(byId.get('A-108')?.old_price, 1299999);
    assert.equal(byId.get('A-108')?.available, false);
    assert.equal(byId.get('A-109')?.price, 0);
    assert.equal(byId.get('B-201')?.quantity, null);
  });

  it('keeps every awkward name as it was', async () => {
    const awkward = ['Cable 2" USB-C', 'Multi\nline name', 'Carriage\rreturn', 'Tab\there', ' leading space', '=HYPERLINK("http://x")', 'Чехол 📱 для телефона',
      '<&> </script>', 'ctl\u0001\u001f', 'line\u2028sep', 'lone \uD83D surrogate', '\\back\\slash'];
    const list = awkward.map((name, i) => normalizeItem({ offer_id: `W-${i}`, name, price: 1 }));
    const output = await read(jsonWriter, list);
    assert.deepEqual(
      output.items.map((item) => item.name),
      awkward,
    );
  });

  it('with a profile: its keys, in its order, typed', async () => {
    const columns = profileColumns([
      { field: 'offer_id', title: 'Артикул', key: 'sku' },
      { field: 'name', title: 'Наименование' },
      { field: 'price', title: 'Цена' },
      { field: 'attributes.color', title: 'Цвет', key: 'color' },
      { value: 'да', title: 'Выгружать' },
      { field: 'available', title: 'В наличии' },
      { field: 'purchase_price', title: 'Закупка' },
      { field: 'quantity', title: 'Остаток', key: 'stock' },
    ]);
    const list = [
      normalizeItem({ offer_id: 'A-1', name: 'Phone', price: '1990.5', purchase_price: 1500, quantity: 0, attributes: { color: 'чёрный' } }),
      normalizeItem({ offer_id: 'A-2', name: 'Case', price: 10 }),
    ];
    const output = await read(jsonWriter, list, buildMeta(list, { columns }));
    assert.deepEqual(output.items, [
      { sku: 'A-1', name: 'Phone', price: 1990.5, color: 'чёрный', Выгружать: 'да', available: false, purchase_price: 1500, stock: 0 },
      { sku: 'A-2', name: 'Case', price: 10, color: null, Выгружать: 'да', available: true, purchase_price: null, stock: null },
    ]);
    assert.deepEqual(Object.keys(output.items[0]), ['sku', 'name', 'price', 'color', 'Выгружать', 'available', 'purchase_price', 'stock']);
  });

  it('an empty list is valid JSON', async () => {
    const output = await read(jsonWriter, []);
    assert.deepEqual(output.items, []);
    assert.equal(output.price_list.item_count, 0);
  });

  it('streams 100 000 items in many chunks that join into valid JSON', async () => {
    const list = Array.from({ length: 100_000 }, (_, i) => normalizeItem({ offer_id: `SKU-${i}`, name: `Товар ${i}`, price: i / 100 }));
    const chunks = await collectChunks(jsonWriter.render(inBatches(list, 1000), buildMeta(list)));
    assert.ok(chunks.length > 20, `${chunks.length} chunks`);
    const output = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonExport;
    assert.equal(output.items.length, 100_000);
    assert.equal(output.items[99_999].price, 999.99);
  });
});
