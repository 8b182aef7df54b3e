import assert from 'node:assert/strict';
import { brotliDecompressSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { XMLParser } from 'fast-xml-parser';
import iconv from 'iconv-lite';
import { putProfile } from '../../src/domain/profiles.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';
import { assertValidYml } from '../support/yml-validator.js';

/** Awkward values: Cyrillic, emoji, quotes, separators, line breaks, a formula-looking name, absent fields, tiny and large prices. */
const ITEMS = [
  { offer_id: 'R-1', name: 'Смартфон «Галактика» 😀', price: 0.5, old_price: 1234567.89, quantity: 3, url: 'https://s.example/1', category: 'Электроника / Телефоны', attributes: { color: 'чёрный' }, currency: 'RUB' },
  { offer_id: 'R-2', name: 'Quote " and, comma; semi\ttab', price: 1234567.89, available: false, category: 'Электроника' },
  { offer_id: 'R-3', name: 'Line\nbreak\r\nand CR', price: '10', vendor: 'V & <Co>', attributes: { color: 'red' } },
  { offer_id: 'R-4', name: '=SUM(A1:A2)', price: 99.99, old_price: 100, currency: 'USD', quantity: 0 },
  { offer_id: 'R-5', name: ' padded ', price: 7 },
];

/** The legacy columns as canonical text: what every format must carry, in order. */
const EXPECTED = [
  ['R-1', 'Смартфон «Галактика» 😀', '0.50', '1234567.89', 'RUB', '1', '3', 'https://s.example/1'],
  ['R-2', 'Quote " and, comma; semi\ttab', '1234567.89', '', 'RUB', '0', '', ''],
  ['R-3', 'Line\nbreak\r\nand CR', '10.00', '', 'RUB', '1', '', ''],
  ['R-4', '=SUM(A1:A2)', '99.99', '100.00', 'USD', '0', '0', ''],
  ['R-5', ' padded ', '7.00', '', 'RUB', '1', '', ''],
];
const AVAILABLE = EXPECTED.filter((row) => row[5] === '1');
const LEGACY_KEYS = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'];

const PROFILE = {
  name: 'site',
  columns: [
    { field: 'offer_id', title: 'Артикул', key: 'sku' },
    { field: 'name', title: 'Name' },
    { field: 'price', title: 'Цена' },
    { field: 'attributes.color', title: 'Цвет', key: 'color' },
    { value: 'да', title: 'Выгружать' },
  ],
};
const PROFILE_ROWS = EXPECTED.map((row, i) => [row[0], row[1], row[2], i === 0 ? 'чёрный' : i === 2 ? 'red' : '', 'да']);

const money = (value: unknown) => (value === null || value === undefined || value === '' ? '' : Number(value).toFixed(2));
const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));
const flag = (value: unknown) => (value === true || value === 'true' ? '1' : value === false || value === 'false' ? '0' : text(value));

function canonicalLegacy(record: Record<string, unknown>): string[] {
  return LEGACY_KEYS.map((key) => (key === 'price' || key === 'old_price' ? money(record[key]) : key === 'available' ? flag(record[key]) : text(record[key])));
}

type Reader = (body: Buffer, profile: boolean) => Promise<string[][]> | string[][];

const READERS: Record<string, Reader> = {
  csv: (body) => parseCsv(body, { relax_quotes: false, bom: true }).slice(1),
  tsv: (body) => parseCsv(body, { delimiter: '\t' }).slice(1),
  json: (body, profile) => {
    const doc = JSON.parse(body.toString('utf8'));
    assert.equal(doc.items.length, doc.price_list.item_count);
    return doc.items.map((item: Record<string, unknown>) =>
      profile ? [text(item.sku), text(item.name), money(item.price), text(item.color), text(item['Выгружать'])] : canonicalLegacy(item),
    );
  },
  xml: (body, profile) => {
    const doc = new XMLParser({ parseTagValue: false, trimValues: false, ignoreAttributes: false, htmlEntities: true }).parse(body.toString('utf8'));
    const items = [doc.price_list.item].flat().filter(Boolean) as Record<string, unknown>[];
    return items.map((item) =>
      profile ? [text(item.sku), text(item.name), money(item.price), text(item.color), text(item['Выгружать'])] : canonicalLegacy(item),
    );
  },
  xlsx: async (body) => {
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(body as unknown as ExcelJS.Buffer);
    const sheet = workbook.getWorksheet('Prices');
    assert.ok(sheet);
    assert.equal(sheet.getRow(1).font?.bold ?? sheet.getRow(1).getCell(1).font?.bold, true);
    assert.equal(sheet.views[0]?.state, 'frozen');
    assert.ok(sheet.autoFilter);
    const rows: string[][] = [];
    sheet.eachRow((row, n) => {
      if (n === 1) return;
      const values: string[] = [];
      for (let c = 1; c <= sheet.columnCount; c++) {
        const cell = row.getCell(c);
        assert.notEqual(cell.type, ExcelJS.ValueType.Formula, 'text must never become a formula');
        const kind = typeof cell.value === 'number' && cell.numFmt === '0.00' ? 'money' : 'other';
        values.push(kind === 'money' ? money(cell.value) : flag(cell.value));
      }
      rows.push(values);
    });
    return rows;
  },
};

/** GETs a YML address and checks the body with jing against Yandex's shops.dtd; `label` names it (never the key). */
async function getValidYml(app: TestApp['app'], url: string, label: string) {
  const response = await get(app, url);
  assert.equal(response.statusCode, 200, response.body);
  await assertValidYml({ name: label, body: response.rawPayload });
  return response;
}

for (const dialect of DIALECTS) {
  describe(`every format over HTTP, read back by an independent parser (${dialect})`, () => {
    let t: TestApp;
    let key: string;
    let profileId: number;
    let cp1251Profile: number;
    before(async () => {
      t = await createTestApp(dialect);
      key = await storeWithKey(t.db, 'awkward');
      await publishJson(t.db, 'awkward', ITEMS);
      profileId = (await putProfile(t.db, 'awkward', PROFILE)).id;
      cp1251Profile = (await putProfile(t.db, 'awkward', { ...PROFILE, name: '1c', delimiter: ';', decimal_separator: ',', encoding: 'windows-1251' })).id;
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    for (const format of ['csv', 'tsv', 'json', 'xml', 'xlsx']) {
      for (const withProfile of [false, true]) {
        for (const onlyAvailable of [false, true]) {
          test(`${format}${withProfile ? ' with a profile' : ''}${onlyAvailable ? ', only available' : ''}`, async () => {
            const query = [`format=${format}`, withProfile ? `profile_id=${profileId}` : '', onlyAvailable ? 'only_available=true' : ''].filter(Boolean).join('&');
            const response = await get(t.app, `/api/export/latest?key=${key}&${query}`);
            assert.equal(response.statusCode, 200, response.body);
            assert.match(String(response.headers['content-disposition']), new RegExp(`filename="awkward-\\d{8}T\\d{6}Z\\.${format}"`));
            const rows = await READERS[format](response.rawPayload, withProfile);
            const keep = (rowIndex: number) => !onlyAvailable || EXPECTED[rowIndex][5] === '1';
            const expected = (withProfile ? PROFILE_ROWS : EXPECTED).filter((_, i) => keep(i));
            assert.deepEqual(rows, expected);
          });
        }
      }
    }

    test('yml: offers in order, filtered, every currencyId and categoryId declared, no oldprice at or below price, valid by the DTD', async () => {
      for (const onlyAvailable of [false, true]) {
        const response = await getValidYml(t.app, `/WebApi/CampaignDataLatestGet/${key}?format=YML${onlyAvailable ? '&only_available=1' : ''}`, `legacy-${onlyAvailable}`);
        assert.equal(response.headers['content-type'], 'application/xml; charset=utf-8');
        const doc = new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse(response.body);
        const shop = doc.yml_catalog.shop;
        const offers = [shop.offers.offer].flat();
        assert.deepEqual(offers.map((o: Record<string, string>) => o['@_id']), (onlyAvailable ? AVAILABLE : EXPECTED).map((row) => row[0]));
        const currencies = [shop.currencies.currency].flat().map((c: Record<string, string>) => c['@_id']);
        const categories = [shop.categories.category].flat().map((c: Record<string, string>) => c['@_id']);
        for (const offer of offers) {
          assert.ok(currencies.includes(offer.currencyId), offer.currencyId);
          assert.ok(categories.includes(offer.categoryId), offer.categoryId);
          if (offer.oldprice !== undefined) assert.ok(Number(offer.oldprice) > Number(offer.price));
        }
        assert.ok(currencies.includes('RUR') && currencies.includes('USD'));
        const r1 = offers.find((o: Record<string, string>) => o['@_id'] === 'R-1');
        assert.equal(r1.price, '0.50');
        assert.equal(r1.oldprice, '1234567.89');
      }
    });

    test('yml with a profile keeps the required elements and turns other columns into params, valid by the DTD', async () => {
      await getValidYml(t.app, `/api/export/latest?key=${key}&format=yml&profile_id=${profileId}&only_available=true`, 'profile-available');
      const response = await getValidYml(t.app, `/api/export/latest?key=${key}&format=yml&profile_id=${profileId}`, 'profile');
      const doc = new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse(response.body);
      const offer = [doc.yml_catalog.shop.offers.offer].flat()[0];
      for (const required of ['name', 'price', 'currencyId', 'categoryId']) assert.ok(offer[required] !== undefined, required);
      assert.equal(offer.vendor, undefined);
      const params = [offer.param].flat().map((p: Record<string, string>) => `${p['@_name']}=${p['#text']}`);
      assert.deepEqual(params, ['Цвет=чёрный', 'Выгружать=да']);
    });

    test('yml category ids stay the same after a republication that adds a category', async () => {
      const ids = async () => {
        const doc = new XMLParser({ ignoreAttributes: false, parseTagValue: false }).parse((await getValidYml(t.app, `/api/export/latest?key=${key}&format=yml`, 'categories')).body);
        return new Map([doc.yml_catalog.shop.categories.category].flat().map((c: Record<string, string>) => [c['#text'], c['@_id']]));
      };
      const before = await ids();
      await publishJson(t.db, 'awkward', [{ offer_id: 'N-1', name: 'New', price: 1, category: 'Бытовая техника / Холодильники' }, ...ITEMS]);
      const after = await ids();
      for (const [name, id] of before) assert.equal(after.get(name), id, name);
      assert.ok(after.has('Холодильники') && after.has('Бытовая техника'));
      await publishJson(t.db, 'awkward', ITEMS);
    });

    test('a windows-1251 profile with ";" and a decimal comma, byte for byte', async () => {
      const response = await get(t.app, `/api/export/latest?key=${key}&profile_id=${cp1251Profile}&only_available=true`);
      assert.equal(response.headers['content-type'], 'text/csv; charset=windows-1251');
      const expected =
        'Артикул;Name;Цена;Цвет;Выгружать\r\n' +
        'R-1;Смартфон «Галактика» ?;0,50;чёрный;да\r\n' +
        'R-3;"Line\nbreak\r\nand CR";10,00;red;да\r\n' +
        'R-5;" padded ";7,00;;да\r\n';
      assert.deepEqual(response.rawPayload, iconv.encode(expected, 'win1251'));
    });

    test('a profile edit moves Last-Modified, so If-Modified-Since alone does not keep the old columns', async () => {
      const url = `/api/export/latest?key=${key}&format=csv&profile_id=${profileId}`;
      const before = await get(t.app, url);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await putProfile(t.db, 'awkward', { ...PROFILE, columns: PROFILE.columns.slice(0, 2) }, profileId);
      const after = await get(t.app, url, { 'if-modified-since': String(before.headers['last-modified']) });
      assert.equal(after.statusCode, 200);
      assert.match(after.body, /^Артикул,Name\r\n/);
      await putProfile(t.db, 'awkward', PROFILE, profileId);
    });

    test('each variant has its own ETag; 304 per variant; br decompresses to the identity bytes', async () => {
      const urls = ['csv', 'json', 'xlsx', 'yml'].map((f) => `/api/export/latest?key=${key}&format=${f}`);
      const tags = new Set<string>();
      for (const url of urls) {
        const plain = await get(t.app, url);
        if (url.endsWith('format=yml')) await assertValidYml({ name: 'etag-yml', body: plain.rawPayload });
        tags.add(String(plain.headers.etag));
        assert.equal((await get(t.app, url, { 'if-none-match': String(plain.headers.etag) })).statusCode, 304);
        assert.equal((await get(t.app, url, { 'if-modified-since': String(plain.headers['last-modified']) })).statusCode, 304);
        const br = await get(t.app, url, { 'accept-encoding': 'br' });
        assert.equal(br.headers['content-encoding'], 'br');
        assert.equal(br.headers.vary, 'Accept-Encoding');
        assert.deepEqual(brotliDecompressSync(br.rawPayload), plain.rawPayload);
      }
      assert.equal(tags.size, urls.length);
      const filtered = await get(t.app, `/api/export/latest?key=${key}&format=csv&only_available=true`);
      assert.ok(!tags.has(String(filtered.headers.etag)));
    });
  });
}
