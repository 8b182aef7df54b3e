/**
 * Red-team finding #20.4: a download outlived the grace period of a superseded list, the list
 * was deleted under it, and the file ended on a whole row — 445,370 of 1,020,000 rows, HTTP
 * 200. Now a list's row goes before its rows, and a render that finds its list gone after its
 * last page fails instead of ending: here a version is swept between the first chunk of an
 * export and the rest, for the database-built CSV records and for the item pages (JSON).
 * Also: the retention sweep and the stale-draft sweep a timer runs (#20.19) across stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createExportService, ListGoneWhileReadError } from '../../src/domain/exports.js';
import { normalizeItem } from '../../src/domain/item-validation.js';
import { startMaintenance } from '../../src/domain/maintenance.js';
import { EXPORT_WRITERS } from '../../src/formats/registry.js';
import { PURGE_BATCH } from '../../src/store/sql/purge.js';
import type { PriceItem } from '../../src/model/price-item.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { publishJson, storeWithKey } from '../support/test-app.js';

const COUNT = 30_000;
const items = (tag: string) => Array.from({ length: COUNT }, (_, i) => ({ offer_id: `${tag}-${i}`, name: `Item ${tag} ${i}`, price: 100 + (i % 50) }));

/** Runs SQL on the test database from another connection (what a sweep long after the grace would see). */
async function rawSql(testDb: TestDatabase, sql: { sqlite: string; postgres: string }): Promise<void> {
  if (testDb.dialect === 'sqlite') {
    const raw = new Database(testDb.url.slice('sqlite:'.length));
    try {
      raw.exec(sql.sqlite);
    } finally {
      raw.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  try {
    await client.query(sql.postgres);
  } finally {
    await client.end();
  }
}

/** Every retired version's grace as long past, and every draft an hour and more old. */
const ageEverything = (testDb: TestDatabase) =>
  rawSql(testDb, {
    sqlite: `UPDATE price_lists SET retired_at = 0 WHERE retired_at IS NOT NULL; UPDATE price_lists SET created_at = 0 WHERE status = 'draft';`,
    postgres: `UPDATE price_lists SET retired_at = 'epoch' WHERE retired_at IS NOT NULL; UPDATE price_lists SET created_at = 'epoch' WHERE status = 'draft';`,
  });

for (const dialect of DIALECTS) {
  describe(`a list deleted under its reader (${dialect})`, () => {
    let testDb: TestDatabase;
    before(async () => {
      testDb = await createTestDatabase(dialect);
    });
    after(async () => {
      await testDb.drop();
    });

    for (const format of ['csv', 'json']) {
      test(`${format}: the version is swept after the first chunk → the render fails, it never ends as if whole`, async () => {
        const { db } = testDb;
        const storeId = `swept-${format}`;
        await storeWithKey(db, storeId);
        await publishJson(db, storeId, items('a'));
        const exports = createExportService({ db, writers: EXPORT_WRITERS });
        const resolved = await exports.resolve({ store: (await db.stores.get(storeId))!, list: await db.priceLists.latest(storeId) }, { endpoint: 'prices', format, onlyAvailable: false, profileId: null });
        const reading = exports.open(resolved)[Symbol.asyncIterator]();
        const first = await reading.next();
        assert.equal(first.done, false);

        // Superseded twice with HISTORY_VERSIONS=2: version 1 leaves retention; its grace is long past.
        await publishJson(db, storeId, items('b'), 'json', { force: true, keepVersions: 2 });
        await publishJson(db, storeId, items('c'), 'json', { force: true, keepVersions: 2 });
        await ageEverything(testDb);
        await db.versions.sweep(storeId);

        let bytes = first.value.byteLength;
        await assert.rejects(
          (async () => {
            for (let chunk = await reading.next(); !chunk.done; chunk = await reading.next()) bytes += chunk.value.byteLength;
          })(),
          ListGoneWhileReadError,
        );
        assert.ok(bytes > 0);
      });
    }

    test('a whole read of a kept version still ends normally', async () => {
      const { db } = testDb;
      await storeWithKey(db, 'kept');
      await publishJson(db, 'kept', items('k'));
      const exports = createExportService({ db, writers: EXPORT_WRITERS });
      const resolved = await exports.resolve({ store: (await db.stores.get('kept'))!, list: await db.priceLists.latest('kept') }, { endpoint: 'prices', format: 'csv', onlyAvailable: false, profileId: null });
      let rows = 0;
      for await (const chunk of exports.open(resolved)) rows += Buffer.from(chunk).toString('utf8').split('\r\n').length - 1;
      assert.equal(rows, COUNT + 1);
    });

    test('a superseded list’s rows are deleted in batches that leave the event loop turning (#20.7)', async () => {
      const { db } = testDb;
      await storeWithKey(db, 'big');
      const many = (tag: string) => Array.from({ length: 5 * PURGE_BATCH }, (_, i) => ({ offer_id: `${tag}-${i}`, name: `Item ${i}`, price: 10 }));
      await publishJson(db, 'big', many('one'));
      await publishJson(db, 'big', many('two'), 'json', { force: true, keepVersions: 2 });
      await publishJson(db, 'big', many('three'), 'json', { force: true, keepVersions: 2 });
      await ageEverything(testDb);
      // Turns of the event loop while the sweep runs: a delete that held the loop (the server's own
      // SQLite connection is synchronous) would leave none between its batches.
      let turns = 0;
      let sweeping = true;
      const turn = () => {
        turns++;
        if (sweeping) setImmediate(turn);
      };
      setImmediate(turn);
      await db.versions.sweep('big');
      sweeping = false;
      assert.ok(turns >= 5, `the event loop turned ${turns} times during 5 batches`);
      const versions = (await db.versions.listVersions('big')).map((v) => v.list.version);
      assert.deepEqual([...versions].sort(), [2, 3]);
    });

    test('the timer sweeps: a killed publication’s draft and superseded versions of a store that stopped publishing go, kept lists stay', async () => {
      const { db } = testDb;
      await storeWithKey(db, 'killed');
      const kept = await publishJson(db, 'killed', items('x'));
      // A publication killed mid-way: its draft and rows stay behind.
      const draft = await db.priceLists.beginPublication('killed');
      await draft.append(items('y').slice(0, 500).map((raw, seq) => ({ seq, item: normalizeItem(raw, 'RUB').item as PriceItem })));
      await storeWithKey(db, 'quiet');
      await publishJson(db, 'quiet', items('q1'));
      await publishJson(db, 'quiet', items('q2'), 'json', { force: true, keepVersions: 2 });
      await publishJson(db, 'quiet', items('q3'), 'json', { force: true, keepVersions: 2 });
      await ageEverything(testDb);

      // What serve's timer runs (its interval is not waited for: the run is asked for directly).
      const errors: unknown[] = [];
      const maintenance = startMaintenance(db, (error) => errors.push(error), 3_600_000);
      await maintenance.runOnce();
      await maintenance.stop();
      assert.deepEqual(errors, []);
      assert.equal(await db.priceLists.exists(draft.id), false);
      assert.equal((await db.priceLists.latest('killed'))?.id, kept.id);
      const versions = (await db.versions.listVersions('quiet')).map((v) => v.list.version);
      assert.deepEqual([...versions].sort(), [2, 3]);
      let served = 0;
      for await (const batch of db.priceLists.readItems((await db.priceLists.latest('quiet'))!.items_list_id, { onlyAvailable: false, withExtra: false })) served += batch.length;
      assert.equal(served, COUNT);
    });
  });
}
