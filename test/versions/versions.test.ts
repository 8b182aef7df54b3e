/**
 * CONTRACT §10's operations on every dialect: the diff counts, hold → release, hold → discard,
 * quarantine → release of some and of all, rollback to the previous and to an older version,
 * retention deleting the oldest (and never rows a rollback still serves), and bad input.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { discardHeld, listVersions, releaseHeld, releaseQuarantine, rollback, showQuarantine } from '../../src/domain/versions.js';
import { isAppError } from '../../src/errors/app-error.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { items, newStore, prices, publish } from './versions-support.js';

const KEEP = 10;

const rejectsWith = (promise: Promise<unknown>, code: string, detail?: RegExp) =>
  assert.rejects(promise, (error) => {
    assert.ok(isAppError(error), String(error));
    assert.equal(error.code, code);
    if (detail) assert.match(error.detail, detail);
    return true;
  });

/** Ages every retired version of the store past the grace period, behind the store's back. */
async function ageRetired(db: TestDatabase, storeId: string): Promise<void> {
  if (db.dialect === 'sqlite') {
    const conn = new Database(db.url.slice('sqlite:'.length));
    conn.prepare('UPDATE price_lists SET retired_at = 1 WHERE store_id = ? AND retired_at IS NOT NULL').run(storeId);
    conn.close();
  } else {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query("UPDATE price_lists SET retired_at = 'epoch' WHERE store_id = $1 AND retired_at IS NOT NULL", [storeId]);
    await client.end();
  }
}

/** Item rows stored under each list id of the store (drafts included). */
async function rowsByList(db: TestDatabase, listIds: number[]): Promise<number[]> {
  const counts: number[] = [];
  for (const id of listIds) {
    let rows = 0;
    for await (const batch of db.db.priceLists.readItems(id, { onlyAvailable: false })) rows += batch.length;
    counts.push(rows);
  }
  return counts;
}

for (const dialect of DIALECTS) {
  describe(`versions (${dialect})`, () => {
    let db: TestDatabase;
    before(async () => { db = await createTestDatabase(dialect); });
    after(async () => db.drop());

    test('the diff counts added, removed, price_up, price_down and unchanged by offer_id', async () => {
      const storeId = await newStore(db.db);
      const first = await publish(db.db, storeId, items(10));
      assert.deepEqual({ ...first.diff }, { compared_with: null, added: 10, removed: 0, price_up: 0, price_down: 0, unchanged: 0, verdict: 'published', forced: false, tripped: [] });
      // A0 removed; A1 up 10 %; A2, A3 down 10 %; A4–A9 unchanged; B0 added.
      const next = await publish(db.db, storeId, [...items(10, (i) => (i === 1 ? 110 : i < 4 ? 90 : 100)).slice(1), { offer_id: 'B0', price: 5 }]);
      assert.deepEqual({ ...next.diff, tripped: next.diff.tripped.length }, {
        compared_with: first.version, added: 1, removed: 1, price_up: 1, price_down: 2, unchanged: 6, verdict: 'published', forced: false, tripped: 0,
      });
      const [latest] = await listVersions(db.db, storeId);
      assert.deepEqual(latest.diff, next.diff);
      assert.equal(latest.state, 'latest');
    });

    test('hold → release: the held version becomes latest with its own version number', async () => {
      const storeId = await newStore(db.db);
      const good = await publish(db.db, storeId, items(10));
      const held = await publish(db.db, storeId, items(5));
      assert.equal(held.state, 'held');
      assert.deepEqual((await listVersions(db.db, storeId)).map((v) => [v.version, v.state, v.source]), [[held.version, 'held', 'publish'], [good.version, 'latest', 'publish']]);
      await rejectsWith(releaseHeld(db.db, storeId, good.version, KEEP), 'version_not_held');
      await rejectsWith(releaseHeld(db.db, storeId, 999, KEEP), 'version_not_found');
      const released = await releaseHeld(db.db, storeId, held.version, KEEP);
      assert.equal(released.list.version, held.version);
      const latest = (await db.db.priceLists.latest(storeId))!;
      assert.equal(latest.version, held.version);
      assert.ok(latest.published_at >= good.published_at);
      assert.equal((await prices(db.db, latest.items_list_id)).length, 5);
      assert.deepEqual((await listVersions(db.db, storeId)).map((v) => [v.version, v.state]), [[held.version, 'latest'], [good.version, 'retained']]);
      await rejectsWith(releaseHeld(db.db, storeId, held.version, KEEP), 'version_not_held');
    });

    test('hold → discard: the held version is gone and nothing served changed', async () => {
      const storeId = await newStore(db.db);
      const good = await publish(db.db, storeId, items(10));
      const held = await publish(db.db, storeId, items(1));
      await discardHeld(db.db, storeId, held.version);
      assert.deepEqual((await listVersions(db.db, storeId)).map((v) => [v.version, v.state]), [[good.version, 'latest']]);
      assert.equal((await db.db.priceLists.latest(storeId))!.id, good.id);
      await rejectsWith(discardHeld(db.db, storeId, held.version), 'version_not_found');
      await rejectsWith(discardHeld(db.db, storeId, good.version), 'version_not_held');
      // A later publication gets a new number: versions are never reused.
      const next = await publish(db.db, storeId, items(10));
      assert.equal(next.version, held.version + 1);
    });

    test('a newer latest discards an older held version', async () => {
      const storeId = await newStore(db.db);
      await publish(db.db, storeId, items(10));
      const held = await publish(db.db, storeId, items(1));
      const next = await publish(db.db, storeId, items(10, () => 101));
      assert.equal(next.state, 'latest');
      await rejectsWith(releaseHeld(db.db, storeId, held.version, KEEP), 'version_not_found');
    });

    test('quarantine → release of some, then of all, each a new version; unknown offers are refused', async () => {
      const storeId = await newStore(db.db);
      await publish(db.db, storeId, items(5));
      const q = await publish(db.db, storeId, [...items(5, (i) => (i === 0 ? 1 : i === 1 ? 0 : i === 2 ? 1000 : 100)), { offer_id: 'N0', price: 0 }]);
      assert.equal(q.diff.verdict, 'published_with_quarantine');
      assert.deepEqual(await prices(db.db, q.items_list_id), [['A0', 10000], ['A1', 10000], ['A2', 10000], ['A3', 10000], ['A4', 10000]]);
      const pending = await showQuarantine(db.db, storeId);
      assert.equal(pending.count, 4);
      assert.deepEqual(pending.items.map((i) => [i.offer_id, i.check, i.old_price, i.new_price]), [
        ['A0', 'price_drop', 10000, 100], ['A1', 'zero_price', 10000, 0], ['A2', 'price_rise', 10000, 100000], ['N0', 'zero_price', null, 0],
      ]);

      await rejectsWith(releaseQuarantine(db.db, storeId, ['A0', 'A3', 'nope'], KEEP), 'not_quarantined', /A3, nope/);
      assert.equal((await db.db.priceLists.latest(storeId))!.id, q.id);

      const some = await releaseQuarantine(db.db, storeId, ['A0', 'N0'], KEEP);
      assert.equal(some.list.version, q.version + 1);
      assert.deepEqual(await prices(db.db, some.list.items_list_id), [['A0', 100], ['A1', 10000], ['A2', 10000], ['A3', 10000], ['A4', 10000], ['N0', 0]]);
      assert.equal(some.list.item_count, 6);
      assert.deepEqual([some.diff.added, some.diff.price_down, some.diff.unchanged], [1, 1, 4]);
      assert.deepEqual((await showQuarantine(db.db, storeId)).items.map((i) => i.offer_id), ['A1', 'A2']);

      const all = await releaseQuarantine(db.db, storeId, null, KEEP);
      assert.deepEqual(await prices(db.db, all.list.items_list_id), [['A0', 100], ['A1', 0], ['A2', 100000], ['A3', 10000], ['A4', 10000], ['N0', 0]]);
      assert.equal((await showQuarantine(db.db, storeId)).count, 0);
      await rejectsWith(releaseQuarantine(db.db, storeId, null, KEEP), 'not_quarantined', /no quarantined items/);
    });

    test('rollback to the previous and to an older version: new versions serving the same rows', async () => {
      const storeId = await newStore(db.db);
      const v1 = await publish(db.db, storeId, items(4, () => 100));
      const v2 = await publish(db.db, storeId, items(4, () => 110));
      const v3 = await publish(db.db, storeId, items(4, () => 120));
      const back = await rollback(db.db, storeId, null, KEEP);
      assert.equal(back.list.version, v3.version + 1);
      assert.equal(back.list.items_list_id, v2.items_list_id);
      assert.deepEqual(await prices(db.db, back.list.items_list_id), items(4).map((it) => [it.offer_id, 11000]));
      assert.deepEqual([back.diff.compared_with, back.diff.price_down, back.diff.unchanged], [v3.version, 4, 0]);
      const older = await rollback(db.db, storeId, v1.version, KEEP);
      assert.equal(older.list.items_list_id, v1.items_list_id);
      const latest = (await db.db.priceLists.latest(storeId))!;
      assert.equal(latest.version, older.list.version);
      const versions = await listVersions(db.db, storeId);
      assert.deepEqual(versions.map((v) => [v.version, v.state, v.source]), [
        [older.list.version, 'latest', 'rollback'], [back.list.version, 'retained', 'rollback'], [v3.version, 'retained', 'publish'],
        [v2.version, 'retained', 'publish'], [v1.version, 'retained', 'publish'],
      ]);
      await rejectsWith(rollback(db.db, storeId, 999, KEEP), 'version_not_found');
      await rejectsWith(rollback(db.db, storeId, latest.version, KEEP), 'version_is_latest');
    });

    test('retention keeps the last HISTORY_VERSIONS versions, deletes older ones after the grace, and keeps rows a rollback serves', async () => {
      const storeId = await newStore(db.db);
      const keep = 2;
      const v1 = await publish(db.db, storeId, items(3, () => 100), { keepVersions: keep });
      const v2 = await publish(db.db, storeId, items(3, () => 101), { keepVersions: keep });
      const v3 = await publish(db.db, storeId, items(3, () => 102), { keepVersions: keep });
      assert.deepEqual((await listVersions(db.db, storeId)).map((v) => v.version), [v3.version, v2.version]);
      // Out of retention: no longer served, but its rows stay for the grace period (a download in progress finishes).
      assert.equal(await db.db.versions.getVersion(storeId, v1.version), null);
      assert.deepEqual(await rowsByList(db, [v1.id]), [3]);
      await rejectsWith(rollback(db.db, storeId, v1.version, keep), 'version_not_found');

      // Rolling back to v2 retires v2 itself (keep 2: the rollback and v3), but its rows serve the rollback.
      const back = await rollback(db.db, storeId, v2.version, keep);
      await ageRetired(db, storeId);
      await db.db.versions.sweep(storeId);
      assert.deepEqual(await rowsByList(db, [v1.id, v2.id, v3.id]), [0, 3, 3]);
      assert.deepEqual((await listVersions(db.db, storeId)).map((v) => v.version), [back.list.version, v3.version]);

      // Two more publications retire the rollback and v3; then v2's rows go too.
      await publish(db.db, storeId, items(3, () => 103), { keepVersions: keep });
      await publish(db.db, storeId, items(3, () => 104), { keepVersions: keep });
      await ageRetired(db, storeId);
      await db.db.versions.sweep(storeId);
      assert.deepEqual(await rowsByList(db, [v2.id, v3.id]), [0, 0]);
      assert.equal((await listVersions(db.db, storeId)).length, 2);
    });
  });
}
