import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { assertValidYml, jingMessages } from '../../test/support/yml-validator.js';
import { profileColumns } from '../model/columns.js';
import type { ProfileColumn } from '../model/profile.js';
import { buildMeta, collectChunks, DEFAULT_CATEGORY_NAME, inBatches, legacySample, normalizeItem, readFixture } from '../../test/support/format-items.js';
import { ymlWriter } from './yml.js';

/** An element as preserveOrder reads it: `{ tag: children, ':@': attributes }`. */
type Node = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  htmlEntities: true,
});

const tagOf = (node: Node): string => Object.keys(node).find((key) => key !== ':@')!;
const childrenOf = (node: Node): Node[] => node[tagOf(node)] as Node[];
const textOf = (node: Node): string => {
  const children = childrenOf(node);
  return children.length === 0 ? '' : String(children[0]['#text']);
};
const child = (node: Node, tag: string): Node | undefined => childrenOf(node).find((c) => tagOf(c) === tag);

interface Offer {
  id: string;
  available: string;
  tags: string[];
  values: Map<string, string>;
  params: [string, string][];
}

interface Catalog {
  date: string;
  shopTags: string[];
  shop: Map<string, string>;
  currencies: Map<string, string>;
  categories: { id: string; parentId: string | undefined; name: string }[];
  offers: Offer[];
}

/** Renders, checks the document against Yandex's shops.dtd with jing, and reads it back. */
async function renderYml(items: Parameters<typeof buildMeta>[0], meta = buildMeta(items)): Promise<Catalog> {
  const text = Buffer.concat(await collectChunks(ymlWriter.render(inBatches(items), meta))).toString('utf8');
  assert.ok(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<yml_catalog date="'));
  assert.equal(XMLValidator.validate(text), true, 'well-formed');
  await assertValidYml({ name: 'yml-writer', body: text });
  const root = (parser.parse(text) as Node[]).find((node) => tagOf(node) === 'yml_catalog')!;
  const shop = child(root, 'shop')!;
  const shopNodes = childrenOf(shop);
  return {
    date: root[':@']!.date,
    shopTags: shopNodes.map(tagOf),
    shop: new Map(shopNodes.filter((node) => ['name', 'company', 'url'].includes(tagOf(node))).map((node) => [tagOf(node), textOf(node)])),
    currencies: new Map(childrenOf(child(shop, 'currencies')!).map((node) => [node[':@']!.id, node[':@']!.rate])),
    categories: childrenOf(child(shop, 'categories')!).map((node) => ({ id: node[':@']!.id, parentId: node[':@']!.parentId, name: textOf(node) })),
    offers: childrenOf(child(shop, 'offers')!).map((offer) => {
      const nodes = childrenOf(offer);
      return {
        id: offer[':@']!.id,
        available: offer[':@']!.available,
        tags: nodes.map(tagOf),
        values: new Map(nodes.filter((node) => tagOf(node) !== 'param').map((node) => [tagOf(node), textOf(node)])),
        params: nodes.filter((node) => tagOf(node) === 'param').map((node) => [node[':@']!.name, textOf(node)]),
      };
    }),
  };
}

/** CONTRACT §6.1, the order of Yandex's shops.dtd (+ count). */
const OFFER_ORDER = ['url', 'price', 'oldprice', 'currencyId', 'categoryId', 'picture', 'name', 'vendor', 'vendorCode', 'description', 'barcode', 'count', 'param'];

/** True when `tags` follow the YML order (params last, any number of them). */
function inYmlOrder(tags: string[]): boolean {
  const positions = tags.map((tag) => OFFER_ORDER.indexOf(tag));
  return positions.every((p, i) => p >= 0 && (i === 0 || p > positions[i - 1] || (tags[i] === 'param' && tags[i - 1] === 'param')));
}

function sampleItems() {
  const { items } = legacySample();
  const extra = [
    normalizeItem({ offer_id: 'C-1', name: 'Same old price', price: 100, old_price: 100, category: 'Электроника / Смартфоны' }),
    normalizeItem({ offer_id: 'C-2', name: 'Lower old price', price: 100, old_price: 50, vendor_code: 'VC-2', picture: 'https://demo-shop.example/c2.jpg', description: 'Desc <b>&</b>' }),
    normalizeItem({ offer_id: 'C-3', name: 'With attributes', price: 5, attributes: { color: 'чёрный', 'size "EU"': '<42 & 43>' } }),
    // Every optional element at once, in a third currency, with awkward text in each.
    normalizeItem({
      offer_id: 'C-4 "&" ё', name: 'Чайник «Смарт» & "Co" 🫖', price: 49.9, old_price: 59.9, currency: 'EUR', quantity: 4,
      url: 'https://demo-shop.example/p?a=1&b="2"', picture: 'https://demo-shop.example/c4.jpg?x=1&y=2', vendor: "O'Brien & Sons",
      vendor_code: '<VC-4>', description: 'Line 1\nLine 2 & <i>ё</i> 😀', barcode: '4601234567891', category: 'Кухня / Чайники & "кофе"',
      attributes: { '': 'empty name', 'объём, л': '1,7' },
    }),
  ];
  return [...items, ...extra];
}

describe('yml writer (CONTRACT §6.1)', () => {
  const items = sampleItems();

  it('dates the catalog in RFC 3339 UTC and orders the shop', async () => {
    const catalog = await renderYml(items, buildMeta(items, { publishedAt: new Date('2026-11-22T07:00:00.123Z') }));
    assert.equal(catalog.date, '2026-11-22T07:00:00+00:00');
    assert.deepEqual(catalog.shopTags, ['name', 'company', 'url', 'currencies', 'categories', 'offers']);
    assert.deepEqual([...catalog.shop], [['name', 'Demo Shop'], ['company', 'Demo Shop'], ['url', 'https://demo-shop.example']]);
    assert.equal(ymlWriter.contentType(buildMeta(items)), 'application/xml; charset=utf-8');
  });

  it('names the company when the store has one', async () => {
    const store = { id: 's', name: 'Shop & Co', currency: 'RUB', url: null, company: 'ООО «Ромашка»' };
    const catalog = await renderYml(items, buildMeta(items, { store }));
    // shops.dtd requires the shop's url: without one it is written empty.
    assert.deepEqual([...catalog.shop], [['name', 'Shop & Co'], ['company', 'ООО «Ромашка»'], ['url', '']]);
  });

  it('declares RUB as RUR at rate 1 and other currencies at the CB rate, and every offer uses a declared one', async () => {
    const catalog = await renderYml(items);
    assert.deepEqual([...catalog.currencies], [['RUR', '1'], ['USD', 'CB'], ['EUR', 'CB']]);
    for (const offer of catalog.offers) assert.ok(catalog.currencies.has(offer.values.get('currencyId')!), offer.id);
    assert.equal(catalog.offers.find((offer) => offer.id === 'A-106')!.values.get('currencyId'), 'USD');
    assert.equal(catalog.offers.find((offer) => offer.id === 'A-100')!.values.get('currencyId'), 'RUR');
  });

  it('declares every category level with its parent, and every offer points at a declared one', async () => {
    const catalog = await renderYml(items);
    const ids = new Set(catalog.categories.map((category) => category.id));
    assert.equal(ids.size, catalog.categories.length);
    for (const category of catalog.categories) if (category.parentId !== undefined) assert.ok(ids.has(category.parentId));
    for (const offer of catalog.offers) assert.ok(ids.has(offer.values.get('categoryId')!), offer.id);

    const byName = new Map(catalog.categories.map((category) => [category.name, category]));
    assert.equal(byName.get('Смартфоны')!.parentId, byName.get('Электроника')!.id);
    assert.equal(byName.get('Электроника')!.parentId, undefined);
    const offers = new Map(catalog.offers.map((offer) => [offer.id, offer]));
    assert.equal(offers.get('A-100')!.values.get('categoryId'), byName.get('Смартфоны')!.id);
    assert.equal(offers.get('A-108')!.values.get('categoryId'), byName.get('Холодильники')!.id);
    assert.equal(offers.get('A-102')!.values.get('categoryId'), byName.get(DEFAULT_CATEGORY_NAME)!.id);
  });

  it('writes each offer in YML order with what it has', async () => {
    const catalog = await renderYml(items);
    assert.deepEqual(
      catalog.offers.map((offer) => offer.id),
      items.map((item) => item.offer_id),
    );
    for (const offer of catalog.offers) assert.ok(inYmlOrder(offer.tags), `${offer.id}: ${offer.tags.join(' ')}`);
    const offers = new Map(catalog.offers.map((offer) => [offer.id, offer]));

    const phone = offers.get('A-100')!;
    assert.equal(phone.available, 'true');
    assert.deepEqual(phone.tags, ['url', 'price', 'oldprice', 'currencyId', 'categoryId', 'name', 'vendor', 'barcode', 'count']);
    assert.equal(phone.values.get('name'), 'Смартфон «Галактика» 128 ГБ');
    assert.equal(phone.values.get('price'), '19990.00');
    assert.equal(phone.values.get('oldprice'), '21990.00');
    assert.equal(phone.values.get('count'), '7');

    const fridge = offers.get('A-108')!;
    assert.equal(fridge.available, 'false');
    assert.equal(fridge.values.get('price'), '1234567.89');
    assert.equal(fridge.values.get('oldprice'), '1299999.00');
    assert.equal(offers.get('A-106')!.values.get('price'), '0.50');
    assert.equal(offers.get('A-101')!.values.get('count'), '0');
    assert.equal(offers.get('A-101')!.available, 'false');
    assert.equal(offers.get('A-103')!.values.get('name'), 'Multi\nline name');
    assert.equal(offers.get('A-107')!.values.get('name'), '=HYPERLINK("http://x")');
    assert.equal(offers.get('A-109')!.values.get('name'), 'Чехол 📱 для телефона');

    const full = offers.get('C-4 "&" ё')!;
    assert.deepEqual(full.tags, ['url', 'price', 'oldprice', 'currencyId', 'categoryId', 'picture', 'name', 'vendor', 'vendorCode', 'description', 'barcode', 'count', 'param', 'param']);
    assert.equal(full.values.get('currencyId'), 'EUR');
    assert.equal(full.values.get('vendor'), "O'Brien & Sons");
    assert.equal(full.values.get('url'), 'https://demo-shop.example/p?a=1&b="2"');

    const described = offers.get('C-2')!;
    assert.deepEqual(described.tags, ['price', 'currencyId', 'categoryId', 'picture', 'name', 'vendorCode', 'description']);
    assert.equal(described.values.get('description'), 'Desc <b>&</b>');
  });

  it('writes oldprice only when it is above the price', async () => {
    const offers = new Map((await renderYml(items)).offers.map((offer) => [offer.id, offer]));
    assert.equal(offers.get('C-1')!.values.has('oldprice'), false);
    assert.equal(offers.get('C-2')!.values.has('oldprice'), false);
    for (const offer of offers.values()) {
      if (offer.values.has('oldprice')) assert.ok(Number(offer.values.get('oldprice')) > Number(offer.values.get('price')), offer.id);
    }
  });

  it('writes one param per attribute, named by its key', async () => {
    const offer = (await renderYml(items)).offers.find((o) => o.id === 'C-3')!;
    assert.deepEqual(offer.params, [
      ['color', 'чёрный'],
      ['size "EU"', '<42 & 43>'],
    ]);
  });

  it('with the sample profile: required elements always, optional ones only when named, other columns as params by title', async () => {
    const profile = JSON.parse(readFixture('profile-sample.json').toString('utf8')) as { columns: ProfileColumn[] };
    const list = [normalizeItem({ offer_id: 'A-100', name: 'Phone', price: 19990, old_price: 21990, vendor: 'V', barcode: '4601234567890', quantity: 3, url: 'https://x.example/p', attributes: { color: 'чёрный' } })];
    const catalog = await renderYml(list, buildMeta(list, { columns: profileColumns(profile.columns) }));
    const [offer] = catalog.offers;
    assert.deepEqual(offer.tags, ['price', 'currencyId', 'categoryId', 'name', 'param', 'param']);
    assert.deepEqual(offer.params, [
      ['Цвет', 'чёрный'],
      ['Выгружать', 'да'],
    ]);
  });

  it('with a profile naming optional fields: vendorCode, oldprice, count, and other fields as params', async () => {
    const columns = profileColumns([
      { field: 'offer_id', title: 'SKU' },
      { field: 'quantity', title: 'Остаток' },
      { field: 'vendor_code', title: 'Код' },
      { field: 'old_price', title: 'Было' },
      { field: 'purchase_price', title: 'Закупка' },
      { field: 'description', title: 'Описание' },
      { field: 'attributes.size', title: 'Размер' },
      { field: 'available', title: 'On' },
    ]);
    const list = [
      normalizeItem({ offer_id: 'P-1', name: 'Boots', price: 100, old_price: 150, purchase_price: 70.5, quantity: 2, vendor_code: 'B-1', vendor: 'Not named', description: 'Warm', attributes: { size: '42' } }),
      normalizeItem({ offer_id: 'P-2', name: 'Socks', price: 10, currency: 'EUR' }),
    ];
    const catalog = await renderYml(list, buildMeta(list, { columns }));
    const [boots, socks] = catalog.offers;
    assert.deepEqual(boots.tags, ['price', 'oldprice', 'currencyId', 'categoryId', 'name', 'vendorCode', 'description', 'count', 'param', 'param']);
    assert.deepEqual(boots.params, [
      ['Закупка', '70.50'],
      ['Размер', '42'],
    ]);
    assert.deepEqual(socks.tags, ['price', 'currencyId', 'categoryId', 'name']);
    assert.equal(socks.values.get('currencyId'), 'EUR');
    assert.equal(catalog.currencies.get('EUR'), 'CB');
  });

  it('streams 100 000 offers in many chunks', async () => {
    const list = Array.from({ length: 100_000 }, (_, i) => normalizeItem({ offer_id: `SKU-${i}`, name: `Товар ${i}`, price: 1, category: `Cat ${i % 10}` }));
    const chunks = await collectChunks(ymlWriter.render(inBatches(list, 1000), buildMeta(list)));
    assert.ok(chunks.length > 50, `${chunks.length} chunks`);
    const text = Buffer.concat(chunks).toString('utf8');
    assert.equal(XMLValidator.validate(text), true);
    assert.equal((text.match(/<offer /g) ?? []).length, 100_000);
    await assertValidYml({ name: 'yml-100k', body: text });
  });
});

describe('the YML validator (Yandex shops.dtd via trang and jing) rejects what a DTD-validating importer rejects', () => {
  const catalog = (shop: string, offer: string) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<yml_catalog date="2026-11-22T07:00:00+00:00"><shop>${shop}` +
    '<currencies><currency id="RUR" rate="1"/></currencies><categories><category id="1">Прочее</category></categories>' +
    `<offers><offer id="A" available="true">${offer}</offer></offers></shop></yml_catalog>\n`;
  const shop = '<name>S</name><company>S</company><url>https://s.example</url>';
  const offer = '<url>https://s.example/a</url><price>1.00</price><currencyId>RUR</currencyId><categoryId>1</categoryId><name>A</name><count>1</count>';

  it('accepts a minimal catalog in the §6.1 order, with count as the one addition', async () => {
    assert.deepEqual(await jingMessages([{ name: 'minimal', body: catalog(shop, offer) }]), []);
  });

  it('rejects the offer order CONTRACT §6.1 used before (name first)', async () => {
    const old = '<name>A</name><url>https://s.example/a</url><price>1.00</price><currencyId>RUR</currencyId><categoryId>1</categoryId>';
    const messages = await jingMessages([{ name: 'name-first', body: catalog(shop, old) }]);
    assert.match(messages.join('\n'), /element "name" not allowed yet; missing required element "price"/);
  });

  it('rejects a shop without url, which is why the writer writes it empty', async () => {
    const messages = await jingMessages([{ name: 'no-url', body: catalog('<name>S</name><company>S</company>', offer) }]);
    assert.match(messages.join('\n'), /element "currencies" not allowed yet; missing required element "url"/);
  });
});
