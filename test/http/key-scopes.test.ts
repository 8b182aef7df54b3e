import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { issueKey, revokeKey, rotateKey, updateKeyAccess, type KeyAccessInput } from '../../src/domain/keys.js';
import { putProfile } from '../../src/domain/profiles.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, ISSUED_KEYS, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

const ITEMS = [
  { offer_id: 'A1', name: 'Alpha', price: 10, competitors: [{ name: 'Rival', price: 9 }] },
  { offer_id: 'A2', name: 'Beta', price: '20.5', quantity: 0 },
];
const PROFILE = { name: 'short', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Price' }] };
const T0 = new Date('2026-11-23T12:00:00.000Z');

type Response = Awaited<ReturnType<typeof get>>;

function assertScopeRefusal(response: Response, where: string): string {
  assert.equal(response.statusCode, 403, `${where}: ${response.body}`);
  assert.equal(response.headers['content-type'], 'application/problem+json', where);
  const body = JSON.parse(response.body);
  assert.equal(body.code, 'key_scope', where);
  assert.match(body.detail, /it opens addresses /, where);
  return body.detail;
}

function assertOpens(response: Response, where: string): void {
  assert.equal(response.statusCode, 200, `${where}: ${response.body}`);
}

/** Every public address a scope names, as one request each (the `changes` address of §11 is not built yet). */
function everyAddress(key: string, query = ''): { address: string; name: string; url: string; headers: Record<string, string> }[] {
  const q = query ? `&${query}` : '';
  return [
    { address: 'prices', name: 'CampaignDataLatestGet', url: `/WebApi/CampaignDataLatestGet/${key}${query ? `?${query}` : ''}`, headers: {} },
    { address: 'prices', name: 'export/latest', url: `/api/export/latest?key=${key}${q}`, headers: {} },
    { address: 'prices', name: 'export/check', url: `/api/export/check?key=${key}&format=yml${q}`, headers: {} },
    { address: 'summary', name: 'SummaryExportLatestGet', url: `/WebApi/SummaryExportLatestGet/${key}${query ? `?${query}` : ''}`, headers: {} },
    { address: 'me', name: 'api/me', url: '/api/me', headers: { 'x-api-key': key } },
  ];
}

for (const dialect of DIALECTS) {
  describe(`key scopes, expiry and rotation (${dialect})`, () => {
    let t: TestApp;
    let now = T0;
    let p1: number;
    let p2: number;
    let foreignProfile: number;
    const scoped = async (access: KeyAccessInput, label = 'scoped') => {
      const issued = await issueKey(t.db, 'shop', label, access, now);
      ISSUED_KEYS.push(issued.value);
      return issued;
    };

    before(async () => {
      t = await createTestApp(dialect, {}, { now: () => now.getTime() });
      await storeWithKey(t.db, 'shop');
      await storeWithKey(t.db, 'other');
      await publishJson(t.db, 'shop', ITEMS);
      p1 = (await putProfile(t.db, 'shop', PROFILE)).id;
      p2 = (await putProfile(t.db, 'shop', { ...PROFILE, name: 'second' })).id;
      foreignProfile = (await putProfile(t.db, 'other', PROFILE)).id;
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    test('addresses: a key opens exactly the addresses it names, on every address', async () => {
      for (const allowed of ['prices', 'summary', 'me'] as const) {
        const { value } = await scoped({ addresses: allowed });
        for (const request of everyAddress(value)) {
          const response = await get(t.app, request.url, request.headers);
          const where = `${allowed} key on ${request.name}`;
          if (request.address === allowed) assertOpens(response, where);
          else assert.match(assertScopeRefusal(response, where), new RegExp(`does not open the ${request.address} address; it opens addresses ${allowed};`));
        }
      }
    });

    test('formats: the format asked for, or the address default when none is, decides; /api/me has no format', async () => {
      const { value } = await scoped({ formats: 'yml,xlsx' });
      assertOpens(await get(t.app, `/api/export/latest?key=${value}&format=yml`), 'yml');
      assertOpens(await get(t.app, `/api/export/latest?key=${value}&format=YML`), 'YML, any case');
      assertOpens(await get(t.app, `/WebApi/CampaignDataLatestGet/${value}?format=xlsx`), 'xlsx on address 2');
      assertOpens(await get(t.app, `/WebApi/SummaryExportLatestGet/${value}`), 'summary is xlsx');
      assertOpens(await get(t.app, `/api/export/check?key=${value}&format=yml`), 'feed check of yml');
      assertOpens(await get(t.app, '/api/me', { 'x-api-key': value }), 'api/me');
      const csv = assertScopeRefusal(await get(t.app, `/api/export/latest?key=${value}`), 'default csv');
      assert.match(csv, /does not open format csv; it opens addresses all; formats yml, xlsx; profiles all/);
      assertScopeRefusal(await get(t.app, `/WebApi/CampaignDataLatestGet/${value}`), 'default csv on address 2');
      assertScopeRefusal(await get(t.app, `/api/export/latest?key=${value}&format=json`), 'json');
      assertScopeRefusal(await get(t.app, `/api/export/check?key=${value}&format=google`), 'feed check of google');

      const ymlOnly = (await scoped({ formats: 'yml' })).value;
      assertScopeRefusal(await get(t.app, `/WebApi/SummaryExportLatestGet/${ymlOnly}`), 'summary without xlsx');
    });

    test('a malformed parameter is a 400 once the address is allowed, a 403 when it is not', async () => {
      const { value } = await scoped({ addresses: 'me', formats: 'yml' });
      assertScopeRefusal(await get(t.app, `/api/export/latest?key=${value}&format=pdf`), 'address refused first');
      const prices = (await scoped({ formats: 'yml', profiles: String(p1) })).value;
      for (const query of [`format=pdf&profile_id=${p1}`, `format=yml&profile_id=abc`, `format=yml&profile_id=${p1}&only_available=maybe`]) {
        const response = await get(t.app, `/api/export/latest?key=${prices}&${query}`);
        assert.equal(response.statusCode, 400, query);
        assert.equal(JSON.parse(response.body).code, 'invalid_parameter');
      }
    });

    test('profiles: a key limited to profiles must name one of them, on every export address', async () => {
      const { value } = await scoped({ profiles: [p1] });
      for (const request of everyAddress(value, `profile_id=${p1}`)) assertOpens(await get(t.app, request.url, request.headers), `${request.name} with profile ${p1}`);
      for (const request of everyAddress(value, `profile_id=${p2}`).filter((r) => r.address !== 'me')) {
        assert.match(assertScopeRefusal(await get(t.app, request.url, request.headers), `${request.name} with profile ${p2}`), new RegExp(`profile ${p2};`));
      }
      for (const request of everyAddress(value).filter((r) => r.address !== 'me')) {
        assert.match(assertScopeRefusal(await get(t.app, request.url, request.headers), `${request.name} without a profile`), /without a profile_id/);
      }
      // Another store's profile: refused by the scope before the 404 could tell it exists.
      assertScopeRefusal(await get(t.app, `/api/export/latest?key=${value}&profile_id=${foreignProfile}`), 'foreign profile');
    });

    test('issuing refuses unknown addresses, formats and another store’s profiles, naming each', async () => {
      await assert.rejects(scoped({ addresses: 'prices,everything', formats: 'pdf', profiles: [foreignProfile] }), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'invalid_input');
        assert.match(error.message, /addresses: "everything"/);
        assert.match(error.message, /formats: "pdf"/);
        assert.match(error.message, new RegExp(`profiles: "${foreignProfile}"`));
        return true;
      });
      await assert.rejects(scoped({ expires: '2020-01-01T00:00:00Z' }), /in the future/);
      await assert.rejects(scoped({ expires: '2027-01-31' }), /RFC 3339/);
    });

    test('/api/me shows the scopes and expiry, and lists only what the key opens', async () => {
      const { value } = await scoped({ addresses: 'summary,me', formats: 'xlsx', profiles: [p2], expires: '2027-01-31T00:00:00Z' });
      const me = JSON.parse((await get(t.app, '/api/me', { 'x-api-key': value })).body);
      assert.deepEqual(me.key.scopes, { addresses: ['summary', 'me'], formats: ['xlsx'], profiles: [p2] });
      assert.equal(me.key.expires_at, '2027-01-31T00:00:00.000Z');
      assert.deepEqual(me.formats, ['xlsx']);
      assert.deepEqual(me.profiles.map((p: { id: number }) => p.id), [p2]);
      assert.deepEqual(Object.keys(me.exports), ['summary']);

      const open = JSON.parse((await get(t.app, '/api/me', { 'x-api-key': (await scoped({})).value })).body);
      assert.deepEqual(open.key.scopes, { addresses: null, formats: null, profiles: null });
      assert.equal(open.key.expires_at, null);
      assert.deepEqual(Object.keys(open.exports), ['campaign_data', 'export_latest', 'summary', 'changes']);
    });

    test('a scope change is seen by the next request, and a 304 is never answered outside the scope', async () => {
      const issued = await scoped({ formats: 'csv,yml' });
      const first = await get(t.app, `/api/export/latest?key=${issued.value}`);
      assertOpens(first, 'csv while allowed');
      const etag = String(first.headers.etag);
      assert.equal((await get(t.app, `/api/export/latest?key=${issued.value}`, { 'if-none-match': etag })).statusCode, 304);
      await updateKeyAccess(t.db, issued.record.id, { formats: 'yml' });
      assertScopeRefusal(await get(t.app, `/api/export/latest?key=${issued.value}`, { 'if-none-match': etag }), 'conditional request after narrowing');
      await updateKeyAccess(t.db, issued.record.id, { formats: null });
      assert.equal((await get(t.app, `/api/export/latest?key=${issued.value}`, { 'if-none-match': etag })).statusCode, 304);
    });

    test('expiry at the boundary: the key works until its expires_at and not at it', async () => {
      now = T0;
      const { value } = await scoped({ expires: '2026-11-23T13:00:00Z' });
      const boundary = new Date('2026-11-23T13:00:00Z').getTime();
      now = new Date(boundary - 1);
      for (const request of everyAddress(value)) assertOpens(await get(t.app, request.url, request.headers), `${request.name} 1 ms before expiry`);
      const etag = String((await get(t.app, `/api/export/latest?key=${value}`)).headers.etag);
      now = new Date(boundary);
      for (const request of everyAddress(value)) {
        const response = await get(t.app, request.url, { ...request.headers, 'if-none-match': etag });
        assert.equal(response.statusCode, 401, `${request.name} at expiry`);
        assert.equal(JSON.parse(response.body).code, 'expired_key');
        assert.match(String(response.headers['www-authenticate']), /^ApiKey, Basic realm="price-export"/);
      }
      now = T0;
    });

    test('rotation: both keys work during the overlap, the old one gets expired_key after, the new one keeps label and scopes', async () => {
      now = T0;
      const old = await scoped({ addresses: 'prices', formats: 'yml' }, 'marketplace');
      const rotated = await rotateKey(t.db, old.record.id, '7d', now);
      ISSUED_KEYS.push(rotated.value);
      assert.notEqual(rotated.value, old.value);
      assert.equal(rotated.record.label, 'marketplace');
      assert.equal(rotated.record.store_id, 'shop');
      assert.deepEqual(rotated.record.scopes, old.record.scopes);
      assert.equal(rotated.record.expires_at, null);
      const end = T0.getTime() + 7 * 86_400_000;
      assert.equal(rotated.old.expires_at?.getTime(), end);

      now = new Date(end - 1);
      for (const key of [old.value, rotated.value]) assertOpens(await get(t.app, `/api/export/latest?key=${key}&format=yml`), 'during the overlap');
      assertScopeRefusal(await get(t.app, `/api/export/latest?key=${rotated.value}`), 'the new key keeps the scopes');
      now = new Date(end);
      assert.equal(JSON.parse((await get(t.app, `/api/export/latest?key=${old.value}&format=yml`)).body).code, 'expired_key');
      assertOpens(await get(t.app, `/api/export/latest?key=${rotated.value}&format=yml`), 'the new key after the overlap');

      // Rotating again with no overlap: the previous key stops at once; an earlier expiry is never extended.
      const again = await rotateKey(t.db, rotated.record.id, '0', now);
      ISSUED_KEYS.push(again.value);
      assert.equal(JSON.parse((await get(t.app, `/api/export/latest?key=${rotated.value}&format=yml`)).body).code, 'expired_key');
      const later = await rotateKey(t.db, old.record.id, '30d', now);
      ISSUED_KEYS.push(later.value);
      assert.equal(later.old.expires_at?.getTime(), end);
      await revokeKey(t.db, later.record.id);
      await assert.rejects(rotateKey(t.db, later.record.id, '1d', now), /revoked/);
      await assert.rejects(rotateKey(t.db, 'key_nosuchkey000', '1d', now), /no key/);
      await assert.rejects(rotateKey(t.db, again.record.id, '7 days', now), /overlap must be/);
      now = T0;
    });
  });
}
