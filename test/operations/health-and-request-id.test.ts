import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { DIALECTS, type TestDatabase } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

/** Runs one statement on the test database through a connection of its own (as another process would). */
async function rawSql(testDb: TestDatabase, sql: string): Promise<void> {
  if (testDb.dialect === 'sqlite') {
    const connection = new Database(testDb.url.slice('sqlite:'.length));
    try { connection.exec(sql); } finally { connection.close(); }
    return;
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  try { await client.query(sql); } finally { await client.end(); }
}

function assertUnavailable(response: { statusCode: number; headers: Record<string, unknown>; body: string }, detail: RegExp) {
  assert.equal(response.statusCode, 503, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json');
  assert.equal(response.headers['retry-after'], '5');
  const body = JSON.parse(response.body);
  assert.equal(body.code, 'unavailable');
  assert.match(body.detail, detail);
}

for (const dialect of DIALECTS) {
  describe(`health, readiness and request ids (${dialect})`, () => {
    let t: TestApp;
    let key: string;
    before(async () => {
      t = await createTestApp(dialect, { BASE_PATH: '/prices' });
      key = await storeWithKey(t.db, 'probe-shop');
      await publishJson(t.db, 'probe-shop', [{ offer_id: 'P1', name: 'Probe item', price: 5 }]);
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    test('/healthz and /readyz answer 200 at the root (whatever BASE_PATH is), without a key, with no store data', async () => {
      for (const [path, status] of [['/healthz', 'alive'], ['/readyz', 'ready']]) {
        const response = await get(t.app, path);
        assert.equal(response.statusCode, 200, response.body);
        assert.deepEqual(JSON.parse(response.body), { status });
        assert.equal(response.headers['cache-control'], 'no-store');
        assert.doesNotMatch(response.body, /probe/i);
        assert.equal((await get(t.app, path, {}, 'HEAD')).statusCode, 200);
      }
      // Not under the base path, and not in the public API's description.
      assert.equal((await get(t.app, '/prices/healthz')).statusCode, 404);
      const openapi = await get(t.app, '/prices/openapi.json');
      assert.doesNotMatch(openapi.body, /healthz|readyz/);
    });

    test('/readyz is 503 with Retry-After while a migration is not applied, and 200 again once it is', async () => {
      const latest = dialect === 'sqlite' ? 'SELECT max(version) FROM schema_migrations' : 'SELECT max(version) FROM schema_migrations';
      await rawSql(t.testDb, `CREATE TABLE saved_migration AS SELECT * FROM schema_migrations WHERE version = (${latest})`);
      await rawSql(t.testDb, `DELETE FROM schema_migrations WHERE version = (SELECT version FROM saved_migration)`);
      assertUnavailable(await get(t.app, '/readyz'), /behind by 1 migration\(s\); run price-export migrate/);
      // Liveness never asks the database.
      assert.equal((await get(t.app, '/healthz')).statusCode, 200);
      await rawSql(t.testDb, 'INSERT INTO schema_migrations SELECT * FROM saved_migration');
      await rawSql(t.testDb, 'DROP TABLE saved_migration');
      assert.equal((await get(t.app, '/readyz')).statusCode, 200);
    });

    test('every answer carries a fresh X-Request-Id, also on each of its log lines; a client cannot choose it without TRUST_PROXY', async () => {
      const first = await get(t.app, `/prices/api/export/latest?key=${key}`, { 'x-request-id': 'client-chosen-1' });
      const second = await get(t.app, '/prices/api/export/latest', { 'x-request-id': 'client-chosen-1' });
      assert.equal(first.statusCode, 200);
      assert.equal(second.statusCode, 401);
      const ids = [first.headers['x-request-id'], second.headers['x-request-id']];
      for (const id of ids) assert.match(String(id), /^[0-9a-f-]{36}$/);
      assert.notEqual(ids[0], ids[1]);
      for (const id of ids) {
        const lines = t.logLines.filter((line) => line.includes(String(id)));
        assert.ok(lines.length >= 1, `a log line carries ${id}`);
        for (const line of lines) assert.equal(JSON.parse(line).request_id, id);
      }
      // Every request line carries one.
      for (const line of t.logLines.filter((l) => JSON.parse(l).msg === 'request')) assert.ok(JSON.parse(line).request_id);
    });

    test('/readyz answers 503 while shutting down; /healthz still answers 200 (the process is alive until it exits)', async () => {
      const draining = await createTestApp(dialect);
      try {
        draining.app.drain!.begin();
        const ready = await get(draining.app, '/readyz');
        assertUnavailable(ready, /restarting/);
        assert.match(String(ready.headers['x-request-id']), /^[0-9a-f-]{36}$/);
        assert.equal((await get(draining.app, '/healthz')).statusCode, 200);
      } finally {
        await draining.close();
      }
    });
  });

  describe(`request ids from the load balancer (${dialect})`, () => {
    test('taken from a trusted proxy (TRUST_PROXY) when short and plain; otherwise replaced', async () => {
      const trusted = await createTestApp(dialect, { TRUST_PROXY: '127.0.0.1' });
      const untrusted = await createTestApp(dialect, { TRUST_PROXY: '10.0.0.0/8' });
      try {
        const taken = await get(trusted.app, '/healthz', { 'x-request-id': 'nginx-4f2a9c.1' });
        assert.equal(taken.headers['x-request-id'], 'nginx-4f2a9c.1');
        assert.ok(trusted.logLines.some((line) => JSON.parse(line).request_id === 'nginx-4f2a9c.1'));
        // inject comes from 127.0.0.1, which 10.0.0.0/8 does not name.
        assert.match(String((await get(untrusted.app, '/healthz', { 'x-request-id': 'nginx-4f2a9c.1' })).headers['x-request-id']), /^[0-9a-f-]{36}$/);
        for (const bad of ['has spaces', 'x'.repeat(65), 'quote"d', 'pex_looksLikeAKey0123456789', 'new\u00e9line']) {
          const answer = await get(trusted.app, '/healthz', { 'x-request-id': bad });
          assert.match(String(answer.headers['x-request-id']), /^[0-9a-f-]{36}$/, bad);
        }
      } finally {
        await trusted.close();
        await untrusted.close();
      }
    });
  });
}
