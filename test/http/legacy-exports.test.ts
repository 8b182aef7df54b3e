import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url));
const sample = JSON.parse(fixture('legacy-sample.json').toString('utf8'));

for (const dialect of DIALECTS) {
  describe(`legacy addresses return the frozen bytes (${dialect})`, () => {
    let t: TestApp;
    let key: string;
    before(async () => {
      t = await createTestApp(dialect);
      key = await storeWithKey(t.db, 'demo-shop', 'Demo Shop');
      await publishJson(t.db, 'demo-shop', sample);
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    const cases = [
      ['CampaignDataLatestGet', (k: string, q = '') => `/WebApi/CampaignDataLatestGet/${k}${q ? `?${q}` : ''}`],
      ['export/latest', (k: string, q = '') => `/api/export/latest?key=${k}${q ? `&${q}` : ''}`],
    ] as const;

    for (const [name, address] of cases) {
      test(`${name}: CSV without parameters`, async () => {
        const response = await get(t.app, address(key));
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
        assert.deepEqual(response.rawPayload, fixture('legacy-sample.csv'));
      });
      test(`${name}: TSV`, async () => {
        const response = await get(t.app, address(key, 'format=tsv'));
        assert.equal(response.headers['content-type'], 'text/tab-separated-values; charset=utf-8');
        assert.deepEqual(response.rawPayload, fixture('legacy-sample.tsv'));
      });
      test(`${name}: CSV with only_available=true`, async () => {
        const response = await get(t.app, address(key, 'only_available=true'));
        assert.deepEqual(response.rawPayload, fixture('legacy-sample.only-available.csv'));
      });
      test(`${name}: format in any case, unknown parameters ignored, first of a repeated parameter`, async () => {
        const response = await get(t.app, address(key, 'format=CSV&utm_source=x&only_available=yes&only_available=bogus'));
        assert.equal(response.statusCode, 200);
        assert.deepEqual(response.rawPayload, fixture('legacy-sample.only-available.csv'));
        const empty = await get(t.app, address(key, 'format=&only_available='));
        assert.deepEqual(empty.rawPayload, fixture('legacy-sample.csv'));
      });
    }

    test('the legacy path matches in any case and with a trailing slash', async () => {
      for (const path of [`/webapi/campaigndatalatestget/${key}`, `/WEBAPI/CampaignDataLatestGet/${key}/`]) {
        const response = await get(t.app, path);
        assert.equal(response.statusCode, 200, path);
        assert.deepEqual(response.rawPayload, fixture('legacy-sample.csv'));
      }
    });

    test('a download names the file after the store and the publication time', async () => {
      const response = await get(t.app, `/api/export/latest?key=${key}`);
      assert.match(String(response.headers['content-disposition']), /^attachment; filename="demo-shop-\d{8}T\d{6}Z\.csv"$/);
      assert.equal(response.headers['cache-control'], 'private, no-cache');
      assert.equal(response.headers['referrer-policy'], 'no-referrer');
      assert.equal(response.headers['x-content-type-options'], 'nosniff');
      assert.ok(response.headers.etag);
      assert.ok(response.headers['last-modified']);
    });

    test('HEAD answers the same headers without a body', async () => {
      const response = await get(t.app, `/api/export/latest?key=${key}`, {}, 'HEAD');
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'text/csv; charset=utf-8');
      assert.equal(response.body, '');
    });

    test('If-None-Match with the ETag answers 304', async () => {
      const first = await get(t.app, `/api/export/latest?key=${key}`);
      const again = await get(t.app, `/api/export/latest?key=${key}`, { 'if-none-match': String(first.headers.etag) });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
    });

    test('gzip when the client accepts it', async () => {
      const { gunzipSync } = await import('node:zlib');
      const response = await get(t.app, `/api/export/latest?key=${key}`, { 'accept-encoding': 'gzip' });
      assert.equal(response.headers['content-encoding'], 'gzip');
      assert.deepEqual(gunzipSync(response.rawPayload), fixture('legacy-sample.csv'));
    });
  });
}
