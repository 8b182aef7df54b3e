/**
 * The public and the internal app share one problem handler (#12 item 6): on a database outage
 * both answer 503 problem+json `unavailable` with Retry-After — the internal one used to
 * answer 500 there. The outage is real: the SQLite database is closed under the running apps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { issueKey } from '../../src/domain/keys.js';
import { createStore } from '../../src/domain/stores.js';
import { buildAdminApp } from '../../src/http/admin/admin-app.js';
import { buildPublicApp } from '../../src/composition.js';
import { createTestDatabase, type TestDatabase } from '../support/dialects.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

describe('one problem handler for both apps', () => {
  let testDb: TestDatabase;
  let publicApp: FastifyInstance;
  let admin: FastifyInstance;
  let key = '';

  before(async () => {
    testDb = await createTestDatabase('sqlite');
    const config = loadConfig({ DATABASE_URL: testDb.url, ADMIN_TOKEN, LOG_LEVEL: 'silent' });
    await createStore(testDb.db, { id: 'outage-shop', name: 'Outage Shop', url: null, company: null });
    key = (await issueKey(testDb.db, 'outage-shop', null)).value;
    publicApp = await buildPublicApp({ config, db: testDb.db });
    admin = await buildAdminApp({ config, db: testDb.db });
    await Promise.all([publicApp.ready(), admin.ready()]);
    await testDb.db.close(); // the outage
  });
  after(async () => {
    await publicApp.close();
    await admin.close();
    await testDb.drop().catch(() => undefined); // already closed above; the folder still goes
  });

  const calls = [
    { app: 'public', inject: () => publicApp.inject({ url: `/api/me`, headers: { 'x-api-key': key } }) },
    { app: 'internal', inject: () => admin.inject({ url: '/admin/stores', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }) },
  ];
  for (const call of calls) {
    test(`the ${call.app} app answers a database outage with 503 unavailable and Retry-After`, async () => {
      const response = await call.inject();
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.headers['content-type'], 'application/problem+json');
      assert.equal(JSON.parse(response.body).code, 'unavailable');
      assert.ok(Number(response.headers['retry-after']) > 0);
    });
  }
});
