import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { issueKey } from '../../src/domain/keys.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, ISSUED_KEYS, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` });
const codeOf = (response: { body: string }) => JSON.parse(response.body).code;

for (const dialect of DIALECTS) {
  describe(`HTTP Basic authentication (${dialect})`, () => {
    let t: TestApp;
    let key: string;
    let otherKey: string;
    before(async () => {
      t = await createTestApp(dialect);
      key = await storeWithKey(t.db, 'shop');
      otherKey = await storeWithKey(t.db, 'other');
      await publishJson(t.db, 'shop', [{ offer_id: 'A1', name: 'Alpha', price: 10 }]);
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    test('address 4, the feed check and /api/me take the key as the Basic password, with any user', async () => {
      for (const user of ['', 'any-user', 'Маркет place']) {
        const me = await get(t.app, '/api/me', basic(`${user}:${key}`));
        assert.equal(me.statusCode, 200, me.body);
        assert.equal(JSON.parse(me.body).store.id, 'shop');
        const file = await get(t.app, '/api/export/latest', basic(`${user}:${key}`));
        assert.equal(file.statusCode, 200, file.body);
        assert.match(file.body, /^offer_id,name,price/);
      }
      assert.equal((await get(t.app, '/api/export/latest?format=json', basic(`u:${key}`))).statusCode, 200);
      assert.equal((await get(t.app, '/api/export/check?format=yml', basic(`u:${key}`))).statusCode, 200);
      // The scheme name is case-insensitive (RFC 9110 §11.1).
      assert.equal((await get(t.app, '/api/me', { authorization: `basic ${Buffer.from(`u:${key}`).toString('base64')}` })).statusCode, 200);
    });

    test('a key in both the header and the address must be the same key, else 400', async () => {
      assert.equal((await get(t.app, `/api/export/latest?key=${key}`, basic(`u:${key}`))).statusCode, 200);
      assert.equal((await get(t.app, '/api/me', { ...basic(`u:${key}`), 'x-api-key': key })).statusCode, 200);
      for (const response of [
        await get(t.app, `/api/export/latest?key=${otherKey}`, basic(`u:${key}`)),
        await get(t.app, '/api/me', { ...basic(`u:${key}`), 'x-api-key': otherKey }),
        await get(t.app, `/api/export/latest?key=not-a-key`, basic(`u:${key}`)),
      ]) {
        assert.equal(response.statusCode, 400, response.body);
        assert.equal(codeOf(response), 'invalid_parameter');
        assert.match(JSON.parse(response.body).detail, /differs from the key in the address/);
      }
    });

    test('a wrong or revoked key in Basic is a 401 offering both schemes', async () => {
      const response = await get(t.app, '/api/me', basic('u:unknown-key'));
      assert.equal(response.statusCode, 401);
      assert.equal(codeOf(response), 'invalid_key');
      assert.equal(response.headers['www-authenticate'], 'ApiKey, Basic realm="price-export", charset="UTF-8"');
      for (const url of ['/api/me', '/api/export/latest', `/WebApi/CampaignDataLatestGet/`]) {
        const missing = await get(t.app, url);
        assert.equal(missing.statusCode, 401, url);
        assert.match(String(missing.headers['www-authenticate']), /^ApiKey, Basic /, url);
      }
    });

    test('malformed Basic headers answer 401 (or the address key), never 500', async () => {
      const malformed = ['Basic', 'Basic ', 'Basic    ', 'Basic !!!not-base64!!!', 'Basic a', `Basic ${Buffer.from('no-colon').toString('base64')}`,
        `Basic ${Buffer.from(key).toString('base64')}`, 'Basic ====', `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x00]).toString('base64')}`];
      for (const authorization of malformed) {
        for (const url of ['/api/me', '/api/export/latest', '/api/export/check?format=yml']) {
          const response = await get(t.app, url, { authorization });
          assert.equal(response.statusCode, 401, `${authorization} on ${url}: ${response.body}`);
          assert.equal(codeOf(response), 'invalid_key', authorization);
          assert.doesNotMatch(response.body, new RegExp(key.slice(4)));
        }
      }
      // An empty password is no key in the header: the address's key (or none: missing_key) answers.
      assert.equal(codeOf(await get(t.app, '/api/me', basic('user:'))), 'missing_key');
      assert.equal(codeOf(await get(t.app, '/api/me', basic(':'))), 'missing_key');
      assert.equal((await get(t.app, `/api/export/latest?key=${key}`, basic('user:'))).statusCode, 200);
      // Other schemes are not ours (a proxy's Bearer): the address's key answers.
      assert.equal((await get(t.app, `/api/export/latest?key=${key}`, { authorization: 'Bearer abc' })).statusCode, 200);
      assert.equal(codeOf(await get(t.app, '/api/me', { authorization: 'Bearer abc' })), 'missing_key');
    });

    test('the legacy path addresses take the key from the path only', async () => {
      assert.equal((await get(t.app, `/WebApi/CampaignDataLatestGet/${key}`, basic('u:unknown-key'))).statusCode, 200);
      assert.equal(codeOf(await get(t.app, '/WebApi/CampaignDataLatestGet/', basic(`u:${key}`))), 'missing_key');
      assert.equal(codeOf(await get(t.app, '/WebApi/SummaryExportLatestGet/', basic(`u:${key}`))), 'missing_key');
    });

    test('a 304 by Basic comes only after the key check', async () => {
      const first = await get(t.app, '/api/export/latest', basic(`u:${key}`));
      const etag = String(first.headers.etag);
      assert.equal((await get(t.app, '/api/export/latest', { ...basic(`u:${key}`), 'if-none-match': etag })).statusCode, 304);
      assert.equal((await get(t.app, '/api/export/latest', { ...basic('u:unknown-key'), 'if-none-match': etag })).statusCode, 401);
    });

    test('no key value in any log line', () => {
      for (const line of t.logLines) {
        assert.doesNotMatch(line, new RegExp(key.slice(4)));
        assert.doesNotMatch(line, /authorization/i);
      }
    });
  });

  describe(`rate limits count 403 key_scope as a right key (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect, { AUTH_FAIL_LIMIT_PER_MIN: '2', RATE_LIMIT_PER_MIN: '4' });
      await storeWithKey(t.db, 'shop');
      await publishJson(t.db, 'shop', [{ offer_id: 'A1', name: 'Alpha', price: 10 }]);
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    test('refusals by scope use up the store quota, never the failed-key limit', async () => {
      const { value } = await issueKey(t.db, 'shop', 'me only', { addresses: 'me' });
      ISSUED_KEYS.push(value);
      for (let i = 0; i < 3; i++) assert.equal((await get(t.app, `/api/export/latest?key=${value}`)).statusCode, 403);
      // Three refusals past a failed-key limit of 2: the client is not treated as a guesser.
      const fourth = await get(t.app, '/api/me', { 'x-api-key': value });
      assert.equal(fourth.statusCode, 200, fourth.body);
      // But they were the store's requests: the fifth is over its quota of 4.
      const fifth = await get(t.app, '/api/me', { 'x-api-key': value });
      assert.equal(fifth.statusCode, 429);
      assert.match(String(fifth.headers['ratelimit-policy'] ?? fifth.headers['ratelimit']), /store|4/);
    });
  });
}
