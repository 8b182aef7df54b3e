/**
 * One table of the four public addresses (CONTRACT §3) drives the answers every one of them
 * owes a caller whose request cannot be served: 401 (no key, a wrong key, a revoked key),
 * 405 (any other method, before the key is looked at) and 429 (a store over its quota, a
 * client over its wrong-key allowance). A new address added to the table gets every check;
 * an address left out of the table is caught by the OpenAPI test below.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { listKeys, revokeKey } from '../../src/domain/keys.js';
import { buildPublicApp } from '../../src/composition.js';
import { testClock } from '../support/clock.js';
import { createTestDatabase, type TestDatabase } from '../support/dialects.js';
import { assertProblem } from '../support/problem.js';
import { ALL_LOG_LINES, findKeyLeaks, publishJson, SEEN_RESPONSES, storeWithKey } from '../support/test-app.js';

/** How each public address carries a key; `null` is a request without one. */
interface PublicAddress {
  name: string;
  /** The OpenAPI path of the address. */
  path: string;
  request(key: string | null): { url: string; headers: Record<string, string> };
}

const PUBLIC_ADDRESSES: readonly PublicAddress[] = [
  { name: 'the account (/api/me)', path: '/api/me', request: (key) => ({ url: '/api/me', headers: key === null ? {} : { 'x-api-key': key } }) },
  { name: 'the delivery ledger', path: '/api/me/deliveries', request: (key) => ({ url: '/api/me/deliveries', headers: key === null ? {} : { 'x-api-key': key } }) },
  { name: 'the legacy price list', path: '/WebApi/CampaignDataLatestGet/{api_key}', request: (key) => ({ url: `/WebApi/CampaignDataLatestGet/${encodeURIComponent(key ?? '')}`, headers: {} }) },
  { name: 'the price list by query', path: '/api/export/latest', request: (key) => ({ url: key === null ? '/api/export/latest' : `/api/export/latest?key=${encodeURIComponent(key)}`, headers: {} }) },
  { name: 'the feed check', path: '/api/export/check', request: (key) => ({ url: key === null ? '/api/export/check?format=yml' : `/api/export/check?format=yml&key=${encodeURIComponent(key)}`, headers: {} }) },
  { name: 'the changes feed', path: '/api/export/changes', request: (key) => ({ url: key === null ? '/api/export/changes?since=1' : `/api/export/changes?since=1&key=${encodeURIComponent(key)}`, headers: {} }) },
  { name: 'the summary matrix', path: '/WebApi/SummaryExportLatestGet/{api_key}', request: (key) => ({ url: `/WebApi/SummaryExportLatestGet/${encodeURIComponent(key ?? '')}`, headers: {} }) },
];

const STORE_LIMIT = 3;
const FAIL_LIMIT = 2;
const ITEMS = [{ offer_id: 'A1', name: 'Alpha', price: 10, competitors: [{ name: 'rival', price: 9 }] }];

describe('every public address answers 401, 405 and 429 alike', () => {
  // The answers come from the HTTP layer and the gate, not from a dialect: SQLite suffices.
  let testDb: TestDatabase;
  let app: FastifyInstance;
  const clock = testClock(1_000);
  let clientSeq = 0;
  const newClient = () => `10.20.0.${++clientSeq}`;

  async function call(address: PublicAddress, key: string | null, client: string, method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' = 'GET') {
    const { url, headers } = address.request(key);
    const response = await app.inject({ method, url, headers, remoteAddress: client });
    SEEN_RESPONSES.push(JSON.stringify(response.headers) + response.body);
    return response;
  }

  before(async () => {
    testDb = await createTestDatabase('sqlite');
    const config = loadConfig({ DATABASE_URL: testDb.url, LOG_LEVEL: 'info', RATE_LIMIT_PER_MIN: String(STORE_LIMIT), AUTH_FAIL_LIMIT_PER_MIN: String(FAIL_LIMIT) });
    const logStream = new Writable({ write(chunk, _encoding, done) { ALL_LOG_LINES.push(chunk.toString()); done(); } });
    app = await buildPublicApp({ config, db: testDb.db, logStream, now: clock.now });
    await app.ready();
  });
  after(async () => {
    await app.close();
    await testDb.drop();
    assert.deepEqual(findKeyLeaks(), []);
  });

  test('the table is the whole public surface: every address /openapi.json lists, and no other', async () => {
    const doc = JSON.parse((await app.inject({ url: '/openapi.json' })).body);
    assert.deepEqual(PUBLIC_ADDRESSES.map((a) => a.path).sort(), Object.keys(doc.paths).sort());
  });

  PUBLIC_ADDRESSES.forEach((address, n) => {
    test(`${address.name}: 401 missing_key, invalid_key and revoked_key, with WWW-Authenticate`, async () => {
      const storeId = `shop-401-${n}`;
      const key = await storeWithKey(testDb.db, storeId);
      await publishJson(testDb.db, storeId, ITEMS);
      assert.equal((await call(address, key, newClient())).statusCode, 200, 'the right key is served');
      assertProblem(await call(address, null, newClient()), 401, 'missing_key');
      const wrongChecksum = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
      for (const wrong of ['pex_short', wrongChecksum, 'unknown-legacy-key']) assertProblem(await call(address, wrong, newClient()), 401, 'invalid_key');
      const [record] = await listKeys(testDb.db, storeId);
      await revokeKey(testDb.db, record.id);
      assertProblem(await call(address, key, newClient()), 401, 'revoked_key');
    });

    test(`${address.name}: 405 with Allow for every other method, before the key is looked at`, async () => {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
        for (const key of [null, 'unknown-legacy-key']) {
          const response = await call(address, key, newClient(), method);
          assertProblem(response, 405, 'method_not_allowed');
          assert.equal(response.headers.allow, 'GET, HEAD');
        }
      }
    });

    test(`${address.name}: 429 for a store over its quota, and for a client over its wrong-key allowance`, async () => {
      const storeId = `shop-429-${n}`;
      const key = await storeWithKey(testDb.db, storeId);
      await publishJson(testDb.db, storeId, ITEMS);
      for (let i = 0; i < STORE_LIMIT; i++) assert.equal((await call(address, key, newClient())).statusCode, 200);
      assertProblem(await call(address, key, newClient()), 429, 'rate_limited');

      const guesser = newClient();
      for (let i = 0; i < FAIL_LIMIT; i++) assertProblem(await call(address, `wrong-key-${n}-${i}`, guesser), 401, 'invalid_key');
      assertProblem(await call(address, `wrong-key-${n}-x`, guesser), 429, 'rate_limited');
    });
  });
});
