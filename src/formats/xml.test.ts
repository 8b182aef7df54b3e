import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { profileColumns } from '../model/columns.js';
import { buildMeta, collectChunks, inBatches, legacySample, normalizeItem, renderToBuffer, textXmlParser } from '../../test/support/format-items.js';
import { escapeAttribute, escapeText, xmlName, xmlWriter } from './xml.js';

// htmlEntities decodes numeric references (&#13;) as any XML parser does.
const parser = textXmlParser('item');
const orderedParser = new XMLParser({ preserveOrder: true, ignoreAttributes: true });

type Item = Record<string, string>;
interface Parsed {
  price_list: { '@store': string; '@version': string; '@published_at': string; item?: Item[] };
}

async function renderXml(...args: Parameters<typeof renderToBuffer>): Promise<{ text: string; doc: Parsed }> {
  const text = (await renderToBuffer(...args)).toString('utf8');
  assert.equal(XMLValidator.validate(text), true, 'well-formed');
  return { text, doc: parser.parse(text) as Parsed };
}

const LEGACY_KEYS = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'];

describe('xml writer', () => {
  const { items } = legacySample();

  it('declares UTF-8 and carries the price list attributes', async () => {
    const { text, doc } = await renderXml(xmlWriter, items);
    assert.ok(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<price_list store="demo-shop" version="7" published_at="2026-11-22T07:00:00.000Z">'));
    assert.equal(doc.price_list['@store'], 'demo-shop');
    assert.equal(doc.price_list['@version'], '7');
    assert.equal(doc.price_list['@published_at'], '2026-11-22T07:00:00.000Z');
    assert.equal(xmlWriter.contentType(buildMeta(items)), 'application/xml; charset=utf-8');
  });

  it('one element per legacy column, in order, with typed text and empty absent values', async () => {
    const { text, doc } = await renderXml(xmlWriter, items);
    const ordered = orderedParser.parse(text) as Record<string, Record<string, unknown>[]>[];
    const priceList = ordered.find((node) => 'price_list' in node)!.price_list;
    assert.equal(priceList.length, items.length);
    for (const item of priceList) assert.deepEqual((item.item as Record<string, unknown>[]).map((child) => Object.keys(child)[0]), LEGACY_KEYS);

    const byId = new Map(doc.price_list.item!.map((item) => [item.offer_id, item]));
    assert.deepEqual(byId.get('A-101'), { offer_id: 'A-101', name: 'Case, black', price: '799.50', old_price: '', currency: 'RUB', available: 'false', quantity: '0', url: '' });
    assert.equal(byId.get('A-106')!.price, '0.50');
    assert.equal(byId.get('A-108')!.price, '1234567.89');
    assert.equal(byId.get('A-100')!.available, 'true');
    assert.match(text, /<item><offer_id>A-101<\/offer_id><name>Case, black<\/name><price>799\.50<\/price><old_price\/>/);
  });

  it('round-trips awkward text and drops what XML 1.0 cannot hold', async () => {
    const names = ['Cable 2" USB-C', 'Multi\nline name', 'Carriage\rreturn', 'Tab\there', ' leading space ', '=HYPERLINK("http://x")', 'Чехол 📱', "<&> ]]> 'q'"];
    const list = [...names.map((name, i) => normalizeItem({ offer_id: `W-${i}`, name, price: 1 })), normalizeItem({ offer_id: 'C-1', name: 'Bell\u0007 vt\u000B lone\uD83D ok', price: 1 })];
    const { doc, text } = await renderXml(xmlWriter, list);
    const parsed = doc.price_list.item!.map((item) => item.name);
    assert.deepEqual(parsed, [...names, 'Bell vt lone ok']);
    assert.ok(text.includes('Carriage&#13;return'));
  });

  it('with a profile: its keys as element names, made legal', async () => {
    const columns = profileColumns([
      { field: 'offer_id', title: 'Артикул', key: 'sku' },
      { field: 'price', title: 'Цена' },
      { value: 'да', title: 'Выгружать' },
      { field: 'attributes.color', title: 'Color', key: '1c color' },
      { field: 'old_price', title: 'Old', key: 'price (old)' },
      { field: 'available', title: 'On', key: 'ns:on' },
    ]);
    const list = [normalizeItem({ offer_id: 'A-1', name: 'n', price: 1990.5, old_price: 2000, attributes: { color: 'red & blue' } })];
    const { doc } = await renderXml(xmlWriter, list, buildMeta(list, { columns }));
    assert.deepEqual(doc.price_list.item![0], { sku: 'A-1', price: '1990.50', Выгружать: 'да', _1c_color: 'red & blue', price__old_: '2000.00', ns_on: 'true' });
  });

  it('names, text and attributes are escaped by the rules', () => {
    assert.equal(xmlName('offer_id'), 'offer_id');
    assert.equal(xmlName('Цена'), 'Цена');
    assert.equal(xmlName('1c code'), '_1c_code');
    assert.equal(xmlName('-x.y'), '_-x.y');
    assert.equal(xmlName('a:b/c'), 'a_b_c');
    assert.equal(xmlName(''), '_');
    assert.equal(escapeText('a < b & c > d "e"'), 'a &lt; b &amp; c &gt; d "e"');
    assert.equal(escapeAttribute('say "hi"\tnow\n'), 'say &quot;hi&quot;&#9;now&#10;');
    assert.equal(escapeText('plain'), 'plain');
  });

  it('an empty list is a well-formed document', async () => {
    const { doc } = await renderXml(xmlWriter, []);
    assert.equal(doc.price_list.item, undefined);
  });

  it('streams 100 000 items in many chunks', async () => {
    const list = Array.from({ length: 100_000 }, (_, i) => normalizeItem({ offer_id: `SKU-${i}`, name: `Товар <${i}>`, price: 1 }));
    const chunks = await collectChunks(xmlWriter.render(inBatches(list, 1000), buildMeta(list)));
    assert.ok(chunks.length > 20, `${chunks.length} chunks`);
    const text = Buffer.concat(chunks).toString('utf8');
    assert.equal(XMLValidator.validate(text), true);
    assert.equal((text.match(/<item>/g) ?? []).length, 100_000);
  });
});
