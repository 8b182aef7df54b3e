/**
 * Red-team finding #20.7: a request must never wait on a write lock. A key used for the first
 * time in a minute gets its last_used_at written; that write once ran on the request path, so
 * while a CLI publication (another process) held SQLite's write lock the server waited on it
 * synchronously — every request stalled — and on PostgreSQL a request waited on the key row's
 * lock. Here another connection holds the lock while the request is made: the request is
 * answered, and last_used_at is written once the lock is released.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { DIALECTS } from '../support/dialects.js';
import { until } from '../support/until.js';
import { createTestApp, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

/** Holds the write lock (SQLite) or the key rows' locks (PostgreSQL) from another connection until released. */
async function holdWriteLock(t: TestApp): Promise<() => Promise<void>> {
  if (t.testDb.dialect === 'sqlite') {
    const other = new Database(t.testDb.url.slice('sqlite:'.length));
    other.prepare('BEGIN IMMEDIATE').run();
    return async () => {
      other.prepare('COMMIT').run();
      other.close();
    };
  }
  const client = new pg.Client({ connectionString: t.testDb.url });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT id FROM api_keys FOR UPDATE');
  return async () => {
    await client.query('COMMIT');
    await client.end();
  };
}

for (const dialect of DIALECTS) {
  describe(`requests while another connection holds the write lock (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(dialect);
    });
    after(async () => {
      await t.close();
    });

    test('a key used for the first time is served at once; its last_used_at is written after the lock is released', async () => {
      const key = await storeWithKey(t.db, 'locked');
      await publishJson(t.db, 'locked', [{ offer_id: 'A1', name: 'Alpha', price: 10 }]);
      const keyId = (await t.db.keys.list('locked'))[0].id;
      assert.equal((await t.db.keys.get(keyId))?.last_used_at, null);

      const release = await holdWriteLock(t);
      let released = false;
      try {
        const answer = await t.app.inject({ method: 'GET', url: `/api/export/latest?key=${key}&format=json` });
        assert.equal(answer.statusCode, 200, answer.body);
        const me = await t.app.inject({ method: 'GET', url: '/api/me', headers: { 'x-api-key': key } });
        assert.equal(me.statusCode, 200, me.body);
        assert.notEqual(me.json().key.last_used_at, null, 'the use is known at once to this instance');
        await release();
        released = true;
      } finally {
        if (!released) await release();
      }
      await until('last_used_at written', async () => (await t.db.keys.get(keyId))?.last_used_at != null);
    });
  });
}
