/**
 * CONTRACT §10 through the real app on every dialect: `version=N` on addresses 2 and 4 in every
 * format (the bytes and ETag the version had as latest), 404 version_not_found for unknown,
 * deleted and held versions, `/api/me` versions, and what fetchers get while a publication is
 * held, quarantined, released or rolled back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { putProfile } from '../../src/domain/profiles.js';
import { releaseHeld, releaseQuarantine, rollback } from '../../src/domain/versions.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, get, storeWithKey, type TestApp } from '../support/test-app.js';
import { items, publish } from '../versions/versions-support.js';

const FORMATS = ['csv', 'tsv', 'xlsx', 'json', 'xml', 'yml', 'commerceml', 'google'] as const;

const problem = (response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json');
  assert.equal(JSON.parse(response.body).code, code);
};

for (const dialect of DIALECTS) {
  describe(`versions over HTTP (${dialect})`, () => {
    let t: TestApp;
    let key: string;
    let profileId: number;
    const storeId = `vh-${dialect}`;
    const v1Answers = new Map<string, { body: string; etag: string }>();
    const variants = (format: string) => [`format=${format}`, `format=${format}&only_available=true`, `format=${format}&profile_id=${profileId}`];

    before(async () => {
      t = await createTestApp(dialect);
      key = await storeWithKey(t.db, storeId);
      profileId = (await putProfile(t.db, storeId, { name: 'p', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Price' }] })).id;
      await publish(t.db, storeId, items(6, (i) => 100 + i).map((it, i) => ({ ...it, available: i % 2 === 0, category: 'Cat / Sub' })));
      for (const format of FORMATS) {
        for (const query of variants(format)) {
          const response = await get(t.app, `/api/export/latest?key=${key}&${query}`);
          assert.equal(response.statusCode, 200);
          v1Answers.set(query, { body: response.rawPayload.toString('base64'), etag: String(response.headers.etag) });
        }
      }
      await publish(t.db, storeId, items(6, (i) => 110 + i).map((it, i) => ({ ...it, available: i % 2 === 0, category: 'Cat / Sub' })));
    });
    after(async () => t.close());

    test('version=N serves that version in every format, profile and filter, with the bytes and ETag it had as latest', async () => {
      for (const format of FORMATS) {
        for (const query of variants(format)) {
          const old = v1Answers.get(query)!;
          for (const url of [`/api/export/latest?key=${key}&${query}&version=1`, `/WebApi/CampaignDataLatestGet/${key}?${query}&version=1`]) {
            const response = await get(t.app, url);
            assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
            assert.equal(response.rawPayload.toString('base64'), old.body, `${query}: same bytes as when version 1 was latest`);
            assert.equal(response.headers.etag, old.etag, query);
            assert.equal((await get(t.app, url, { 'if-none-match': old.etag })).statusCode, 304);
          }
          const latest = await get(t.app, `/api/export/latest?key=${key}&${query}`);
          assert.notEqual(latest.rawPayload.toString('base64'), old.body, query);
          assert.notEqual(latest.headers.etag, old.etag, `${query}: other bytes, another ETag`);
          assert.equal((await get(t.app, `/api/export/latest?key=${key}&${query}&version=2`)).headers.etag, latest.headers.etag);
        }
      }
    });

    test('a malformed version is 400; an unknown one 404 version_not_found, after the profile check', async () => {
      for (const bad of ['0', 'abc', '-1', '1234567890']) {
        problem(await get(t.app, `/api/export/latest?key=${key}&version=${bad}`), 400, 'invalid_parameter');
      }
      problem(await get(t.app, `/api/export/latest?key=${key}&version=99`), 404, 'version_not_found');
      problem(await get(t.app, `/WebApi/CampaignDataLatestGet/${key}?version=99`), 404, 'version_not_found');
      problem(await get(t.app, `/api/export/latest?key=${key}&version=99&profile_id=987654`), 404, 'profile_not_found');
      // The summary address takes no version: an unknown parameter there, ignored.
      assert.equal((await get(t.app, `/WebApi/SummaryExportLatestGet/${key}?version=abc`)).statusCode, 200);
    });

    test('held, quarantined, released and rolled back: what a fetcher gets, and /api/me versions', async () => {
      const csv = async (query = '') => (await get(t.app, `/api/export/latest?key=${key}&format=json${query}`)).body;
      const served = async (query = '') => (JSON.parse(await csv(query)) as { items: { offer_id: string; price: unknown }[] }).items.map((i) => `${i.offer_id}=${i.price}`);
      const before = await served();

      // 50 % of the items removed: held; nothing changes for fetchers; the held version is not served.
      const held = await publish(t.db, storeId, items(3, () => 1));
      assert.equal(held.state, 'held');
      assert.deepEqual(await served(), before);
      problem(await get(t.app, `/api/export/latest?key=${key}&version=${held.version}`), 404, 'version_not_found');
      const me = JSON.parse((await get(t.app, '/api/me', { 'x-api-key': key })).body);
      assert.deepEqual(me.versions.map((v: { version: number; state: string; source: string }) => [v.version, v.state, v.source]), [[3, 'held', 'publish'], [2, 'latest', 'publish'], [1, 'retained', 'publish']]);
      assert.deepEqual(Object.keys(me.versions[0]).sort(), ['available_count', 'item_count', 'published_at', 'source', 'state', 'version']);
      assert.equal(me.price_list.version, 2);

      await releaseHeld(t.db, storeId, held.version, 10);
      assert.deepEqual(await served(), ['A0=1', 'A1=1', 'A2=1']);

      // A0 back up by far more than 100 %: quarantined, served at 1 until released.
      const q = await publish(t.db, storeId, items(3, (i) => (i === 0 ? 500 : 1)));
      assert.equal(q.diff.verdict, 'published_with_quarantine');
      const etagBefore = (await get(t.app, `/api/export/latest?key=${key}`)).headers.etag;
      assert.deepEqual(await served(), ['A0=1', 'A1=1', 'A2=1']);
      await releaseQuarantine(t.db, storeId, null, 10);
      assert.deepEqual(await served(), ['A0=500', 'A1=1', 'A2=1']);
      assert.notEqual((await get(t.app, `/api/export/latest?key=${key}`)).headers.etag, etagBefore);

      // Rollback to version 2: served by the next request, under a new version and ETag.
      const etagBeforeRollback = (await get(t.app, `/api/export/latest?key=${key}`)).headers.etag;
      const back = await rollback(t.db, storeId, 2, 10);
      assert.deepEqual(await served(), before);
      const after = await get(t.app, `/api/export/latest?key=${key}`);
      assert.notEqual(after.headers.etag, etagBeforeRollback);
      assert.match(String(after.headers.etag), new RegExp(`^"v${back.list.version}-`));
      const versions = JSON.parse((await get(t.app, '/api/me', { 'x-api-key': key })).body).versions;
      assert.deepEqual(versions[0], { version: back.list.version, published_at: back.list.published_at.toISOString(), item_count: 6, available_count: 3, state: 'latest', source: 'rollback' });
    });
  });
}
