import assert from 'node:assert/strict';
import { until } from '../support/until.js';
import { after, before, describe, test } from 'node:test';
import { importKey, revokeKey } from '../../src/domain/keys.js';
import { putProfile } from '../../src/domain/profiles.js';
import { DIALECTS } from '../support/dialects.js';
import { assertProblem } from '../support/problem.js';
import { createTestApp, findKeyLeaks, get, newKey, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

const ITEMS_A = [{ offer_id: 'A1', name: 'Alpha', price: 10 }, { offer_id: 'A2', name: 'Beta', price: '20.5', quantity: 0 }];
const ITEMS_B = [{ offer_id: 'SECRET-B', name: 'Bravo only', price: 99 }];
const PROFILE = { name: 'short', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Price' }] };

for (const dialect of DIALECTS) {
  describe(`errors, keys and isolation (${dialect})`, () => {
    let t: TestApp;
    let keyA: string;
    let keyB: string;
    let keyEmpty: string;
    let profileB: number;
    let profileA: number;
    before(async () => {
      t = await createTestApp(dialect);
      keyA = await storeWithKey(t.db, 'store-a');
      keyB = await storeWithKey(t.db, 'store-b');
      keyEmpty = await storeWithKey(t.db, 'store-empty');
      await publishJson(t.db, 'store-a', ITEMS_A);
      await publishJson(t.db, 'store-b', ITEMS_B);
      profileA = (await putProfile(t.db, 'store-a', PROFILE)).id;
      profileB = (await putProfile(t.db, 'store-b', PROFILE)).id;
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    test('400 invalid_parameter names the parameter and its allowed values', async () => {
      for (const [query, name] of [['format=pdf', 'format'], ['only_available=maybe', 'only_available'], ['profile_id=abc', 'profile_id'], ['profile_id=0', 'profile_id'], ['profile_id=1234567890123456789', 'profile_id']]) {
        const body = assertProblem(await get(t.app, `/api/export/latest?key=${keyA}&${query}`), 400, 'invalid_parameter');
        assert.match(body.detail, new RegExp(name));
      }
      const body = assertProblem(await get(t.app, `/WebApi/CampaignDataLatestGet/${keyA}?format=pdf`), 400, 'invalid_parameter');
      assert.match(body.detail, /csv, tsv, xlsx, json, xml, yml/);
    });

    test('401 missing_key: no header, empty segment, no key parameter', async () => {
      assertProblem(await get(t.app, '/api/me'), 401, 'missing_key');
      assertProblem(await get(t.app, '/WebApi/CampaignDataLatestGet/'), 401, 'missing_key');
      assertProblem(await get(t.app, '/api/export/latest'), 401, 'missing_key');
      assertProblem(await get(t.app, '/api/export/latest?key='), 401, 'missing_key');
      assertProblem(await get(t.app, '/api/export/check?format=yml'), 401, 'missing_key');
    });

    test('401 invalid_key: malformed, wrong checksum, unknown', async () => {
      const wrongChecksum = keyA.slice(0, -1) + (keyA.endsWith('0') ? '1' : '0');
      for (const key of ['pex_short', wrongChecksum, 'unknown-legacy-key', 'has space']) {
        assertProblem(await get(t.app, `/api/me`, { 'x-api-key': key }), 401, 'invalid_key');
        assertProblem(await get(t.app, `/api/export/latest?key=${encodeURIComponent(key)}`), 401, 'invalid_key');
        assertProblem(await get(t.app, `/api/export/check?format=yml&key=${encodeURIComponent(key)}`), 401, 'invalid_key');
      }
    });

    test('401 comes before 400: a bad key with a bad parameter is a key problem', async () => {
      assertProblem(await get(t.app, '/api/export/latest?key=nope&format=pdf'), 401, 'invalid_key');
    });

    test('404 profile_not_found for an unknown profile and for another store’s, answered alike', async () => {
      const unknown = assertProblem(await get(t.app, `/api/export/latest?key=${keyA}&profile_id=999999`), 404, 'profile_not_found');
      const foreign = assertProblem(await get(t.app, `/api/export/latest?key=${keyA}&profile_id=${profileB}`), 404, 'profile_not_found');
      assert.equal(unknown.detail.replace('999999', 'N'), foreign.detail.replace(String(profileB), 'N'));
      const own = await get(t.app, `/api/export/latest?key=${keyA}&profile_id=${profileA}`);
      assert.equal(own.statusCode, 200);
    });

    test('404 price_list_not_found before the first publication; profile checked first', async () => {
      assertProblem(await get(t.app, `/WebApi/CampaignDataLatestGet/${keyEmpty}`), 404, 'price_list_not_found');
      assertProblem(await get(t.app, `/WebApi/CampaignDataLatestGet/${keyEmpty}?profile_id=${profileA}`), 404, 'profile_not_found');
    });

    test('404 not_found is the service’s own and does not echo the address', async () => {
      const response = await get(t.app, `/no/such/${keyA}`);
      const body = assertProblem(response, 404, 'not_found');
      assert.ok(!response.body.includes(keyA));
      assert.ok(!body.detail.includes('/no/such'));
    });

    test('405 method_not_allowed with Allow, before the key is checked', async () => {
      for (const url of [`/api/me`, `/api/export/latest?key=${keyA}`, `/WebApi/CampaignDataLatestGet/${keyA}`, `/api/export/check?key=${keyA}&format=yml`]) {
        const response = await get(t.app, url, {}, 'POST');
        assertProblem(response, 405, 'method_not_allowed');
        assert.equal(response.headers.allow, 'GET, HEAD');
      }
      assertProblem(await get(t.app, '/api/me', {}, 'DELETE'), 405, 'method_not_allowed');
    });

    test('a malformed address answers the service’s own problem without echoing it', async () => {
      const response = await get(t.app, `/WebApi/CampaignDataLatestGet/%zz${keyA}`);
      assert.ok(response.statusCode === 400 || response.statusCode === 401, String(response.statusCode));
      assert.equal(response.headers['content-type'], 'application/problem+json');
      assert.ok(!response.body.includes(keyA));
    });

    test('a key of store A never reaches store B’s data', async () => {
      const a = await get(t.app, `/api/export/latest?key=${keyA}&format=json`);
      assert.ok(!a.body.includes('SECRET-B'));
      assert.deepEqual(JSON.parse(a.body).items.map((i: { offer_id: string }) => i.offer_id), ['A1', 'A2']);
      const me = JSON.parse((await get(t.app, '/api/me', { 'x-api-key': keyA })).body);
      assert.equal(me.store.id, 'store-a');
      assert.deepEqual(me.profiles, [{ id: profileA, name: 'short' }]);
      const b = await get(t.app, `/WebApi/CampaignDataLatestGet/${keyB}`);
      assert.match(b.body, /SECRET-B/);
    });

    test('/api/me describes the key’s own account and never the key', async () => {
      const response = await get(t.app, '/api/me', { 'x-api-key': keyA });
      assert.equal(response.statusCode, 200);
      const me = JSON.parse(response.body);
      assert.deepEqual(me.store, { id: 'store-a', name: 'Store store-a', currency: 'RUB' });
      assert.equal(me.price_list.version, 1);
      assert.equal(me.price_list.item_count, 2);
      assert.equal(me.price_list.available_count, 1);
      assert.ok(keyA.startsWith(me.key.prefix));
      assert.ok(me.key.last_used_at);
      assert.deepEqual(me.formats, ['csv', 'tsv', 'xlsx', 'json', 'xml', 'yml', 'commerceml', 'google']);
      assert.match(me.exports.campaign_data, /\/WebApi\/CampaignDataLatestGet\/\{api_key\}$/);
      assert.match(me.exports.export_latest, /\/api\/export\/latest\?key=\{api_key\}$/);
      assert.ok(!response.body.includes(keyA));
      assert.ok(!/hash/.test(response.body));
      const empty = JSON.parse((await get(t.app, '/api/me', { 'x-api-key': keyEmpty })).body);
      assert.equal(empty.price_list, null);
    });

    test('revocation takes effect on the next request, even for a conditional one', async () => {
      const key = await newKey(t.db, 'store-a');
      const first = await get(t.app, `/api/export/latest?key=${key}`);
      assert.equal(first.statusCode, 200);
      // The key just used: its last_used_at is written in the background (#20.7), so wait for it.
      const used = async () => (await t.db.keys.list('store-a')).find((k) => key.startsWith(k.prefix) && k.revoked_at === null && k.last_used_at !== null);
      await until('the use written', async () => (await used()) !== undefined);
      const record = (await used())!;
      await revokeKey(t.db, record.id);
      assertProblem(await get(t.app, `/api/export/latest?key=${key}`, { 'if-none-match': String(first.headers.etag) }), 401, 'revoked_key');
      assertProblem(await get(t.app, '/api/me', { 'x-api-key': key }), 401, 'revoked_key');
      assert.equal((await get(t.app, `/api/export/latest?key=${keyA}`)).statusCode, 200);
    });

    test('a predecessor key imported by value works and is stored only as a hash', async () => {
      const legacy = '3F2504E0-4F89-11D3-9A0C-0305E82C3301';
      await importKey(t.db, 'store-b', legacy, null);
      const response = await get(t.app, `/WebApi/CampaignDataLatestGet/${legacy}`);
      assert.equal(response.statusCode, 200);
      assert.match(response.body, /SECRET-B/);
      const keys = await t.db.keys.list('store-b');
      assert.ok(!JSON.stringify(keys).includes(legacy));
    });

    test('a bad publication leaves the previous list served', async () => {
      const before = (await get(t.app, `/api/export/latest?key=${keyA}`)).body;
      await assert.rejects(
        publishJson(t.db, 'store-a', [{ offer_id: 'X1', name: 'ok', price: 1 }, { offer_id: 'X2', name: '', price: -1 }, { offer_id: 'X1', name: 'dup', price: 2 }]),
        (error: { code: string; extra: { problems: { position: string; reason: string }[] } }) => {
          assert.equal(error.code, 'invalid_publication');
          assert.deepEqual(error.extra.problems.map((p) => p.position), ['items[1]', 'items[2]']);
          assert.match(error.extra.problems[0].reason, /name must not be empty/);
          assert.match(error.extra.problems[0].reason, /price must be ≥ 0/);
          assert.match(error.extra.problems[1].reason, /repeats/);
          return true;
        },
      );
      assert.equal((await get(t.app, `/api/export/latest?key=${keyA}`)).body, before);
      const me = JSON.parse((await get(t.app, '/api/me', { 'x-api-key': keyA })).body);
      assert.equal(me.price_list.version, 1);
    });

    test('every response carries the security headers', async () => {
      for (const url of ['/api/me', '/nowhere', `/api/export/latest?key=${keyA}`, '/openapi.json']) {
        const response = await get(t.app, url);
        assert.equal(response.headers['referrer-policy'], 'no-referrer', url);
        assert.equal(response.headers['x-content-type-options'], 'nosniff', url);
      }
    });

    test('log lines carry the route pattern, never the address', async () => {
      await get(t.app, `/WebApi/CampaignDataLatestGet/${keyA}`);
      const routes = t.logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request').map((entry) => entry.route);
      assert.ok(routes.includes('/WebApi/CampaignDataLatestGet/:api_key'));
      assert.ok(t.logLines.every((line) => !line.includes(keyA)));
    });
  });
}
