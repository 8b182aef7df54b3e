import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { profileColumns } from '../model/columns.js';
import type { PriceItem } from '../model/price-item.js';
import { googleWriter } from './google.js';
import { buildMeta, legacySample, plainItem, renderToBuffer, textXmlParser } from '../../test/support/format-items.js';

// An RSS reader's view: namespaced names kept as written (`g:price`), entities resolved.
const rss = textXmlParser('item');
const ordered = new XMLParser({ preserveOrder: true, ignoreAttributes: true });

type GoogleItem = Record<string, string>;

async function render(items: PriceItem[], meta = buildMeta(items)) {
  const text = (await renderToBuffer(googleWriter, items, meta)).toString('utf8');
  assert.equal(XMLValidator.validate(text), true, 'well-formed');
  const doc = rss.parse(text) as { rss: { '@version': string; '@xmlns:g': string; channel: Record<string, unknown> & { item?: GoogleItem[] } } };
  return { text, doc, items: doc.rss.channel.item ?? [] };
}

const FULL = plainItem({
  offer_id: 'PH-1',
  name: 'Смартфон "Nova" 6/128 & чехол 📱',
  price: 199000,
  old_price: 249000,
  currency: 'RUB',
  available: true,
  url: 'https://shop.example/p?id=1&ref=feed',
  picture: 'https://shop.example/img/1.jpg?w=800&h=600',
  vendor: 'Nova & Co',
  vendor_code: 'N-6128',
  barcode: '4601234567893',
  description: 'Экран <6.5"> — AMOLED',
  category: 'Электроника / Телефоны / Смартфоны',
});

describe('google writer', () => {
  it('writes RSS 2.0 with the g: namespace, one item per item, with every attribute the item has', async () => {
    const { text, doc, items } = await render([FULL]);
    assert.ok(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">'));
    assert.equal(doc.rss['@xmlns:g'], 'http://base.google.com/ns/1.0');
    assert.equal(doc.rss.channel.title, 'Demo Shop');
    assert.equal(doc.rss.channel.link, 'https://demo-shop.example');
    const [item] = items;
    assert.equal(item['g:id'], 'PH-1');
    assert.equal(item['g:title'], FULL.name);
    assert.equal(item['g:description'], FULL.description);
    // URLs come back exactly: `&` was escaped in the file, and nothing else was touched.
    assert.equal(item['g:link'], 'https://shop.example/p?id=1&ref=feed');
    assert.equal(item['g:image_link'], 'https://shop.example/img/1.jpg?w=800&h=600');
    assert.match(text, /<g:link>https:\/\/shop\.example\/p\?id=1&amp;ref=feed<\/g:link>/);
    assert.equal(item['g:availability'], 'in_stock');
    assert.equal(item['g:brand'], 'Nova & Co');
    assert.equal(item['g:gtin'], '4601234567893');
    assert.equal(item['g:mpn'], 'N-6128');
    assert.equal(item['g:product_type'], 'Электроника > Телефоны > Смартфоны');
    assert.equal(item['g:condition'], 'new');
  });

  it('applies the sale rule: old_price above price → g:price old, g:sale_price new; otherwise only g:price', async () => {
    const { items } = await render([
      FULL,
      plainItem({ offer_id: 'same', price: 1000, old_price: 1000 }),
      plainItem({ offer_id: 'lower', price: 1000, old_price: 900 }),
      plainItem({ offer_id: 'none', price: 199000, old_price: null }),
    ]);
    assert.deepEqual(items.map((i) => [i['g:price'], i['g:sale_price']]), [
      ['2490.00 RUB', '1990.00 RUB'],
      ['10.00 RUB', undefined],
      ['10.00 RUB', undefined],
      ['1990.00 RUB', undefined],
    ]);
  });

  it('formats every price as `1990.00 CUR` in the item’s own currency, and availability as in_stock/out_of_stock', async () => {
    const { items } = await render([
      plainItem({ offer_id: 'r', price: 199000, currency: 'RUB', available: true }),
      plainItem({ offer_id: 'u', price: 5, currency: 'USD', available: false }),
      plainItem({ offer_id: 'e', price: 1234567, currency: 'EUR', available: true }),
    ]);
    assert.deepEqual(items.map((i) => i['g:price']), ['1990.00 RUB', '0.05 USD', '12345.67 EUR']);
    assert.deepEqual(items.map((i) => i['g:availability']), ['in_stock', 'out_of_stock', 'in_stock']);
  });

  it('leaves out the attributes an item does not have, and keeps the required order-independent ones', async () => {
    const { text, items } = await render([plainItem({ offer_id: 'min', name: "Tom's <b>", price: 100 })]);
    assert.deepEqual(Object.keys(items[0]).filter((key) => key !== '#text').sort(), ['g:availability', 'g:condition', 'g:id', 'g:price', 'g:title']);
    assert.equal(items[0]['g:title'], "Tom's <b>");
    const tags = (ordered.parse(text) as any[])[1].rss[0].channel.find((n: any) => n.item).item.map((n: any) => Object.keys(n)[0]);
    assert.deepEqual(tags, ['g:id', 'g:title', 'g:availability', 'g:price', 'g:condition']);
  });

  it('with a profile: its fields pick the optional attributes; id, title, availability, price and condition stay', async () => {
    const meta = buildMeta([FULL], { columns: profileColumns([{ field: 'offer_id', title: 'id' }, { field: 'url', title: 'link' }, { field: 'category', title: 'cat' }]) });
    const { items } = await render([FULL], meta);
    assert.deepEqual(Object.keys(items[0]).filter((key) => key !== '#text').sort(), ['g:availability', 'g:condition', 'g:id', 'g:link', 'g:price', 'g:product_type', 'g:title']);
    // Without old_price in the profile there is no sale.
    assert.equal(items[0]['g:price'], '1990.00 RUB');
  });

  it('renders the legacy sample (quotes, CR, leading spaces, Cyrillic) and reads every title back', async () => {
    const { items: sample } = legacySample();
    const { items } = await render(sample);
    assert.deepEqual(items.map((i) => i['g:title']), sample.map((item) => item.name));
    assert.deepEqual(items.map((i) => i['g:id']), sample.map((item) => item.offer_id));
  });
});
