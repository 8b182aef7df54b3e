/** PostgreSQL's key look-ups: every request reads the database, the requests of one event-loop turn in one query. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { queriesOf as countQueries } from '../../../test/support/count-queries.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../test/support/dialects.js';
import { sqlDatabase } from '../sql/sql-database.js';
import type { Database } from '../types.js';
import { PostgresDialect } from './dialect.js';

for (const dialect of DIALECTS.filter((name) => name === 'postgres')) {
  describe(`${dialect}: key look-ups asked in one turn`, () => {
    let testDb: TestDatabase;
    let pgDialect: PostgresDialect;
    let db: Database;
    before(async () => {
      testDb = await createTestDatabase(dialect);
      await testDb.db.stores.create({ id: 's', name: 'S', currency: 'RUB', url: null, company: null });
      for (const n of [1, 2, 3]) await testDb.db.keys.insert({ id: `k${n}`, store_id: 's', label: null, prefix: 'p', hash: `h${n}` });
      pgDialect = new PostgresDialect(testDb.url);
      db = sqlDatabase(pgDialect);
    });
    after(async () => {
      await db?.close();
      await testDb?.drop();
    });

    const queriesOf = <T>(run: () => Promise<T>) => countQueries(pgDialect, run);

    it('asks once for every look-up of a turn, each with its own answer', async () => {
      const { value, asked } = await queriesOf(() => Promise.all(['h1', 'h2', 'h1', 'nothing', 'h3'].map((hash) => db.keys.findByHash(hash))));
      assert.deepEqual(value.map((lookup) => lookup?.key.id ?? null), ['k1', 'k2', 'k1', null, 'k3']);
      assert.equal(asked, 1);
    });

    it('asks again for a look-up of a later turn: nothing is remembered between requests', async () => {
      const { asked } = await queriesOf(async () => {
        await db.keys.findByHash('h1');
        await db.keys.findByHash('h1');
      });
      assert.equal(asked, 2);
    });

    it('a look-up that starts once its turn\'s query was sent waits for a query of its own', async () => {
      const { asked } = await queriesOf(async () => {
        const first = db.keys.findByHash('h1');
        // The first turn's query goes out in this check phase; the second look-up asks while it is under way.
        await new Promise((resolve) => setImmediate(resolve));
        await Promise.all([first, db.keys.findByHash('h1')]);
      });
      assert.equal(asked, 2);
    });

    it('a look-up after a revocation by another connection sees it', async () => {
      assert.equal((await db.keys.findByHash('h2'))?.key.revoked_at, null);
      await testDb.db.keys.revoke('k2', new Date('2031-01-01T00:00:00Z'));
      assert.deepEqual((await db.keys.findByHash('h2'))?.key.revoked_at, new Date('2031-01-01T00:00:00Z'));
    });
  });
}
