/**
 * PostgreSQL's key look-ups: the requests of one event-loop turn in one query, which reads only
 * the look-ups' generation when every key of the turn is remembered; anything a look-up reads,
 * changed by any connection, is seen by the next look-up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { KeyScopes } from '../../model/key-scopes.js';
import { queriesOf as countQueries } from '../../../test/support/count-queries.js';
import { publishOneItem } from '../../../test/support/publish-one-item.js';
import { createTestDatabase, DIALECTS, executeRaw, type TestDatabase } from '../../../test/support/dialects.js';
import { sqlDatabase } from '../sql/sql-database.js';
import { DeliveryRuns, type Database } from '../types.js';
import { PostgresDialect } from './dialect.js';


for (const dialect of DIALECTS.filter((name) => name === 'postgres')) {
  describe(`${dialect}: key look-ups asked in one turn, remembered while their generation stays`, () => {
    let testDb: TestDatabase;
    let pgDialect: PostgresDialect;
    /** The server's connections; testDb.db is another instance's (or the CLI's). */
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
    const other = () => testDb.db;

    it('asks once for every look-up of a turn, each with its own answer', async () => {
      const { value, asked } = await queriesOf(() => Promise.all(['h1', 'h2', 'h1', 'nothing', 'h3'].map((hash) => db.keys.findByHash(hash))));
      assert.deepEqual(value.map((lookup) => lookup?.key.id ?? null), ['k1', 'k2', 'k1', null, 'k3']);
      assert.equal(asked, 1);
    });

    it('asks once a later turn too, and answers what it remembers while nothing changed', async () => {
      const first = await db.keys.findByHash('h1');
      const { value, asked } = await queriesOf(() => db.keys.findByHash('h1'));
      assert.equal(value, first, 'the remembered look-up');
      assert.equal(asked, 1, 'the generation, read after the look-up was asked');
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

    it('keeps what it remembers across commits that change no look-up: ledger batches and keys\' last use, by any connection', async () => {
      const remembered = await db.keys.findByHash('h1');
      const record = { store_id: 's', key_id: 'k1', at: new Date(), address: 'prices', format: 'csv', profile_id: null, only_available: false,
        version: null, status: 200, bytes_sent: 10, finished: true, duration_ms: 1, client_class: 'curl', client_address: '192.0.2.1' };
      await other().deliveries.ledger.insert(DeliveryRuns.of([record]));
      await other().keys.touch('k1', new Date(Date.now() - 5_000));
      assert.equal(await db.keys.findByHash('h1'), remembered);
      const at = new Date(Date.now() + 1_000);
      await db.keys.touch('k1', at);
      const touched = await db.keys.findByHash('h1');
      assert.equal(touched, remembered);
      assert.equal(touched?.key.last_used_at?.getTime(), at.getTime(), 'its own touch shows');
    });

    it('sees a revocation by another connection on the next look-up, once it is committed', async () => {
      assert.equal((await db.keys.findByHash('h2'))?.key.revoked_at, null);
      const revoked = new Date('2031-01-01T00:00:00Z');
      await other().keys.revoke('k2', revoked);
      assert.deepEqual((await db.keys.findByHash('h2'))?.key.revoked_at, revoked);

      // The counter is raised as the revoking transaction commits, not before.
      assert.equal((await db.keys.findByHash('h3'))?.key.revoked_at, null);
      const client = new pg.Client({ connectionString: testDb.url });
      await client.connect();
      try {
        await client.query('BEGIN');
        await client.query("UPDATE api_keys SET revoked_at = now() WHERE id = 'k3'");
        assert.equal((await db.keys.findByHash('h3'))?.key.revoked_at, null, 'not committed yet');
        await client.query('COMMIT');
      } finally {
        await client.end();
      }
      assert.ok((await db.keys.findByHash('h3'))?.key.revoked_at, 'committed: seen');
    });

    it('sees a change of scopes, expiry, store or latest list by another connection on the next look-up', async () => {
      await other().keys.insert({ id: 'k-scoped', store_id: 's', label: null, prefix: 'p', hash: 'h-scoped' });
      assert.equal((await db.keys.findByHash('h-scoped'))?.key.scopes, null);
      await other().keys.updateAccess('k-scoped', { scopes: { addresses: null, formats: ['csv'], profiles: null } as KeyScopes });
      assert.deepEqual((await db.keys.findByHash('h-scoped'))?.key.scopes?.formats, ['csv']);
      const expires = new Date('2031-01-01T00:00:00Z');
      await other().keys.updateAccess('k-scoped', { expires_at: expires });
      assert.equal((await db.keys.findByHash('h-scoped'))?.key.expires_at?.getTime(), expires.getTime());
      await other().stores.create({ id: 's2', name: 'S2', currency: 'RUB', url: null, company: null });
      await other().keys.insert({ id: 'k-s2', store_id: 's2', label: null, prefix: 'p', hash: 'h-s2' });
      assert.equal((await db.keys.findByHash('h-s2'))?.latest, null);
      const published = await publishOneItem(other(), 's2');
      assert.equal((await db.keys.findByHash('h-s2'))?.latest?.version, published.version);
      await publishOneItem(other(), 's2');
      const rolledBack = await other().versions.rollback('s2', published.version, 10);
      assert.ok(rolledBack);
      assert.equal((await db.keys.findByHash('h-s2'))?.latest?.id, rolledBack.id);
      // Any other writer that points a store elsewhere, with no list changed.
      await executeRaw(testDb, "UPDATE stores SET latest_price_list_id = NULL WHERE id = 's2'");
      assert.equal((await db.keys.findByHash('h-s2'))?.latest, null);
      await executeRaw(testDb, "UPDATE stores SET name = 'S2 renamed' WHERE id = 's2'");
      assert.equal((await db.keys.findByHash('h-s2'))?.store.name, 'S2 renamed');
    });
  });
}
