/**
 * CONTRACT §11 over HTTP, on every dialect: GET /api/export/changes in every format, each read
 * back by an independent reader (JSON.parse, csv-parse, fast-xml-parser, jing against Yandex's
 * DTD), its headers, the since rules as problem+json, the key's scope, and the export path's
 * ETag, 304, gzip and byte ranges.
 */
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';
import { issueKey } from '../../src/domain/keys.js';
import { putProfile } from '../../src/domain/profiles.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, ISSUED_KEYS, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';
import { assertValidYml } from '../support/yml-validator.js';

const xml = new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => ['item', 'removed', 'offer'].includes(name) });

const BEFORE = [
  { offer_id: 'K-1', name: 'Kettle', price: 1000, category: 'Kitchen', url: 'https://s.example/1' },
  { offer_id: 'K-2', name: 'Pot, "large"', price: 2000, category: 'Kitchen / Pots', currency: 'USD', url: 'https://s.example/2' },
  { offer_id: 'K-3', name: 'Pan', price: 3000, category: 'Kitchen', url: 'https://s.example/3' },
];
/** K-1 changes price, K-2 is removed (its category and currency only version 1 has), K-4 is new, K-3 stays. */
const AFTER = [
  { offer_id: 'K-1', name: 'Kettle', price: 1100, category: 'Kitchen', url: 'https://s.example/1' },
  { offer_id: 'K-3', name: 'Pan', price: 3000, category: 'Kitchen', url: 'https://s.example/3' },
  { offer_id: 'K-4', name: 'Ladle', price: 400, url: 'https://s.example/4' },
];

for (const dialect of DIALECTS) {
  describe(`the changes feed over HTTP (${dialect})`, () => {
    let t: TestApp;
    let key: string;
    let first: number;
    let latest: number;
    let profileId: number;
    before(async () => {
      t = await createTestApp(dialect);
      key = await storeWithKey(t.db, 'deltas');
      first = (await publishJson(t.db, 'deltas', BEFORE)).version;
      latest = (await publishJson(t.db, 'deltas', AFTER, 'json', { force: true })).version;
      profileId = (await putProfile(t.db, 'deltas', { name: 'tsv', columns: [{ field: 'name', title: 'Name' }, { field: 'price', title: 'Price' }], delimiter: ';' })).id;
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    const changes = (query: string, headers: Record<string, string> = {}) => get(t.app, `/api/export/changes?key=${key}&${query}`, headers);

    test('json (the default): the contract shape, both version headers, the file name', async () => {
      const answer = await changes(`since=${first}`);
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(answer.headers['x-price-list-version'], String(latest));
      assert.equal(answer.headers['x-since-version'], String(first));
      assert.match(String(answer.headers['content-disposition']), /filename="deltas-changes-since-1-\d{8}T\d{6}Z\.json"/);
      const body = JSON.parse(answer.body);
      assert.deepEqual(Object.keys(body), ['since', 'version', 'published_at', 'changed', 'removed']);
      assert.deepEqual([body.since, body.version], [first, latest]);
      assert.deepEqual(body.changed.map((item: { offer_id: string; price: number }) => [item.offer_id, item.price]), [['K-1', 1100], ['K-4', 400]]);
      assert.deepEqual(body.removed, ['K-2']);
    });

    test('ndjson: one item per line, then one line with the removed offer_ids', async () => {
      const answer = await changes(`since=${first}&format=NDJSON`);
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(answer.headers['content-type'], 'application/x-ndjson; charset=utf-8');
      assert.ok(answer.body.endsWith('\n'));
      const lines = answer.body.trimEnd().split('\n').map((line) => JSON.parse(line));
      assert.deepEqual(lines.map((line) => line.offer_id ?? line), ['K-1', 'K-4', { removed: ['K-2'] }]);
      const none = await changes(`since=${latest}&format=ndjson`);
      assert.equal(none.body, '{"removed":[]}\n');
    });

    test('csv and tsv: the export columns plus _action; a delete row carries only its offer_id', async () => {
      for (const [format, delimiter] of [['csv', ','], ['tsv', '\t']] as const) {
        const answer = await changes(`since=${first}&format=${format}`);
        assert.equal(answer.statusCode, 200, answer.body);
        const rows = parseCsv(answer.body, { delimiter, relax_quotes: format === 'tsv' }) as string[][];
        assert.deepEqual(rows[0], ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url', '_action']);
        assert.deepEqual(rows.slice(1), [
          ['K-1', 'Kettle', '1100.00', '', 'RUB', '1', '', 'https://s.example/1', 'upsert'],
          ['K-4', 'Ladle', '400.00', '', 'RUB', '1', '', 'https://s.example/4', 'upsert'],
          ['K-2', '', '', '', '', '', '', '', 'delete'],
        ]);
      }
      // A profile without offer_id gets it first; its own delimiter.
      const profiled = parseCsv((await changes(`since=${first}&format=csv&profile_id=${profileId}`)).body, { delimiter: ';' }) as string[][];
      assert.deepEqual(profiled, [['offer_id', 'Name', 'Price', '_action'], ['K-1', 'Kettle', '1100.00', 'upsert'], ['K-4', 'Ladle', '400.00', 'upsert'], ['K-2', '', '', 'delete']]);
    });

    test('xml: <changes since version> with <item> and <removed offer_id/>', async () => {
      const answer = await changes(`since=${first}&format=xml`);
      assert.equal(answer.statusCode, 200, answer.body);
      const root = xml.parse(answer.body).changes;
      assert.deepEqual([root['@_since'], root['@_version'], root['@_store']], [String(first), String(latest), 'deltas']);
      assert.deepEqual(root.item.map((item: { offer_id: string; price: string }) => [item.offer_id, item.price]), [['K-1', '1100.00'], ['K-4', '400.00']]);
      assert.deepEqual(root.removed.map((r: Record<string, string>) => r['@_offer_id']), ['K-2']);
    });

    test('yml: valid against shops.dtd; a removed offer is available="false" with the values version since served', async () => {
      const answer = await changes(`since=${first}&format=yml`);
      assert.equal(answer.statusCode, 200, answer.body);
      await assertValidYml({ name: 'changes.yml', body: answer.body });
      const shop = xml.parse(answer.body).yml_catalog.shop;
      const offers = shop.offers.offer.map((o: Record<string, unknown>) => [o['@_id'], o['@_available'], o.price, o.currencyId]);
      assert.deepEqual(offers, [['K-1', 'true', '1100.00', 'RUR'], ['K-4', 'true', '400.00', 'RUR'], ['K-2', 'false', '2000.00', 'USD']]);
      // The removed offer's category (only version 1 has it) is declared.
      const categories = [shop.categories.category].flat().map((c: Record<string, string>) => c['#text']);
      assert.ok(categories.includes('Pots'), categories.join());
    });

    test('since rules: missing, malformed and beyond the latest answer 400; out of retention 410; all problem+json', async () => {
      for (const [query, code, status] of [['', 'invalid_parameter', 400], ['since=0', 'invalid_parameter', 400], ['since=abc', 'invalid_parameter', 400], [`since=${latest + 1}`, 'invalid_parameter', 400], ['since=1&format=xlsx', 'invalid_parameter', 400]] as const) {
        const answer = await changes(query);
        assert.equal(answer.statusCode, status, `${query}: ${answer.body}`);
        assert.equal(answer.headers['content-type'], 'application/problem+json');
        assert.equal(JSON.parse(answer.body).code, code);
      }
      const store = 'short-history';
      const shortKey = await storeWithKey(t.db, store);
      const old = (await publishJson(t.db, store, BEFORE)).version;
      for (let i = 0; i < 2; i++) await publishJson(t.db, store, AFTER.map((item) => ({ ...item, price: item.price + i + 1 })), 'json', { force: true, keepVersions: 2 });
      const gone = await get(t.app, `/api/export/changes?key=${shortKey}&since=${old}`);
      assert.equal(gone.statusCode, 410, gone.body);
      assert.equal(JSON.parse(gone.body).code, 'since_too_old');
      assert.match(JSON.parse(gone.body).type, /#error-since_too_old$/);
    });

    test('a key limited to the prices address gets 403 key_scope here; one limited to changes opens it', async () => {
      const prices = await issueKey(t.db, 'deltas', 'prices only', { addresses: ['prices'] });
      const deltas = await issueKey(t.db, 'deltas', 'changes only', { addresses: ['changes'] });
      ISSUED_KEYS.push(prices.value, deltas.value);
      const refused = await get(t.app, `/api/export/changes?key=${prices.value}&since=${first}`);
      assert.equal(refused.statusCode, 403);
      assert.equal(JSON.parse(refused.body).code, 'key_scope');
      assert.equal((await get(t.app, `/api/export/changes?key=${deltas.value}&since=${first}`)).statusCode, 200);
      assert.equal((await get(t.app, `/api/export/latest?key=${deltas.value}`)).statusCode, 403);
    });

    test('ETag and 304 on a repeat, gzip, a byte range of the rendered answer; the whole list carries its version too', async () => {
      const whole = await changes(`since=${first}`);
      const etag = String(whole.headers.etag);
      assert.match(etag, /^"v\d+-/);
      const repeat = await changes(`since=${first}`, { 'if-none-match': etag });
      assert.equal(repeat.statusCode, 304);
      // Another `since` is another answer with another ETag.
      assert.notEqual((await changes(`since=${latest}`)).headers.etag, etag);
      const zipped = await t.app.inject({ url: `/api/export/changes?key=${key}&since=${first}`, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(zipped.rawPayload).toString('utf8'), whole.body);
      const part = await changes(`since=${first}`, { range: 'bytes=0-9' });
      assert.equal(part.statusCode, 206);
      assert.equal(part.body, whole.body.slice(0, 10));
      const full = await get(t.app, `/api/export/latest?key=${key}&format=json`);
      assert.equal(full.headers['x-price-list-version'], String(latest));
    });
  });
}
