/**
 * PostgreSQL's pool (DATABASE_POOL_SIZE): a process opens at most that many pooled connections,
 * named `price-export` in pg_stat_activity, and further queries wait for one of them — so an
 * operator can size a fleet against max_connections (docs/running-several-instances.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../test/support/dialects.js';
import { until } from '../../../test/support/until.js';
import { POOL_APPLICATION_NAME } from './dialect.js';

for (const dialect of DIALECTS.filter((name) => name === 'postgres')) {
  describe(`${dialect}: the pool opens at most DATABASE_POOL_SIZE connections`, () => {
    let testDb: TestDatabase;
    /** Another session, holding the lock the pool's queries wait behind. */
    let holder: pg.Client;
    /** A third, reading pg_stat_activity outside any transaction (a transaction would read one snapshot of it throughout). */
    let observer: pg.Client;
    before(async () => {
      testDb = await createTestDatabase(dialect, { poolSize: 2, startThreads: false });
      holder = new pg.Client({ connectionString: testDb.url });
      await holder.connect();
      observer = new pg.Client({ connectionString: testDb.url });
      await observer.connect();
    });
    after(async () => {
      await holder?.end();
      await observer?.end();
      await testDb?.drop();
    });

    const ours = async (where = '') => {
      const { rows } = await observer.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 ${where}`,
        [POOL_APPLICATION_NAME],
      );
      return rows[0].n as number;
    };

    it('three queries at once: two on the pool\'s two connections, the third waiting for one; all answered once they free', async () => {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE stores IN ACCESS EXCLUSIVE MODE');
      const lists = [testDb.db.stores.list(), testDb.db.stores.list()];
      await until('two pooled connections wait on the lock', async () => (await ours("AND wait_event_type = 'Lock'")) === 2);
      // Asked once both wait: a query waits for a pooled connection at most 3 s (then 503).
      lists.push(testDb.db.stores.list());
      assert.deepEqual(testDb.db.poolUse?.(), { total: 2, idle: 0, waiting: 1, max: 2 });
      assert.equal(await ours(), 2, 'no third connection opened');
      await holder.query('COMMIT');
      assert.deepEqual(await Promise.all(lists), [[], [], []]);
    });
  });
}
