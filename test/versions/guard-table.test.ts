/**
 * Every row of CONTRACT §10's guard table, on every dialect: each check trips just past its
 * limit and does not trip at it. List-level trips hold the publication (latest unchanged);
 * item-level trips quarantine the items (served with previous values, a new zero-price item left out).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setGuard } from '../../src/domain/guard.js';
import { isAppError } from '../../src/errors/app-error.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { items, newStore, prices, publish } from './versions-support.js';

for (const dialect of DIALECTS) {
  describe(`the guard table (${dialect})`, () => {
    let db: TestDatabase;
    before(async () => { db = await createTestDatabase(dialect); });
    after(async () => db.drop());

    test('removed: 20 % of 10 items removed publishes; 30 % holds, and the latest stays', async () => {
      const storeId = await newStore(db.db);
      const first = await publish(db.db, storeId, items(10));
      const atLimit = await publish(db.db, storeId, items(8));
      assert.equal(atLimit.diff.verdict, 'published');
      assert.equal(atLimit.diff.removed, 2);
      assert.equal(atLimit.state, 'latest');
      const past = await publish(db.db, storeId, items(10).slice(3));
      assert.equal(past.diff.verdict, 'held');
      assert.equal(past.state, 'held');
      // Compared with the latest (8 items): A0–A2 gone = 3 of 8.
      const removed = past.diff.tripped.find((t) => t.check === 'removed')!;
      assert.equal(removed.count, 3);
      assert.deepEqual(removed.offenders.map((o) => [o.offer_id, o.old_price, o.new_price]), [['A0', '100.00', null], ['A1', '100.00', null], ['A2', '100.00', null]]);
      assert.equal((await db.db.priceLists.latest(storeId))!.version, atLimit.version);
      assert.ok(first.version < atLimit.version && atLimit.version < past.version);
    });

    test('price drop: exactly 50 % passes; a cent more is quarantined and served at its previous price', async () => {
      const storeId = await newStore(db.db);
      await publish(db.db, storeId, items(4));
      const next = await publish(db.db, storeId, items(4, (i) => (i === 0 ? 50 : i === 1 ? '49.99' : 100)));
      assert.equal(next.diff.verdict, 'published_with_quarantine');
      assert.equal(next.state, 'latest');
      assert.equal(next.diff.price_down, 2);
      assert.deepEqual(next.diff.tripped, [{ check: 'price_drop', count: 1, limit: 50, offenders: [{ offer_id: 'A1', old_price: '100.00', new_price: '49.99' }] }]);
      assert.deepEqual(await prices(db.db, next.items_list_id), [['A0', 5000], ['A1', 10000], ['A2', 10000], ['A3', 10000]]);
      assert.equal((await db.db.priceLists.latest(storeId))!.version, next.version);
    });

    test('price rise: exactly 100 % passes; a cent more is quarantined', async () => {
      const storeId = await newStore(db.db);
      await publish(db.db, storeId, items(3));
      const next = await publish(db.db, storeId, items(3, (i) => (i === 0 ? 200 : i === 1 ? '200.01' : 100)));
      assert.equal(next.diff.verdict, 'published_with_quarantine');
      assert.equal(next.diff.price_up, 2);
      assert.deepEqual(next.diff.tripped, [{ check: 'price_rise', count: 1, limit: 100, offenders: [{ offer_id: 'A1', old_price: '100.00', new_price: '200.01' }] }]);
      assert.deepEqual(await prices(db.db, next.items_list_id), [['A0', 20000], ['A1', 10000], ['A2', 10000]]);
    });

    test('zero price: a price set to 0 and a new item at 0 are quarantined; a price already 0 is not; zero-price allow lets them through', async () => {
      const storeId = await newStore(db.db);
      // A store's first list is compared with nothing: its zero price stands.
      const first = await publish(db.db, storeId, items(3, (i) => (i === 2 ? 0 : 100)));
      assert.equal(first.diff.verdict, 'published');
      const unchangedZero = await publish(db.db, storeId, items(3, (i) => (i === 2 ? 0 : 100)));
      assert.equal(unchangedZero.diff.verdict, 'published');
      const zeroed = await publish(db.db, storeId, [...items(3, (i) => (i === 0 ? 0 : i === 2 ? 0 : 100)), { offer_id: 'NEW', price: 0 }]);
      assert.equal(zeroed.diff.verdict, 'published_with_quarantine');
      assert.deepEqual(zeroed.diff.tripped.map((t) => [t.check, t.count, t.offenders.map((o) => o.offer_id)]), [['zero_price', 2, ['A0', 'NEW']]]);
      // A0 keeps its previous price; the new zero-price item is left out; the counts follow.
      assert.deepEqual(await prices(db.db, zeroed.items_list_id), [['A0', 10000], ['A1', 10000], ['A2', 0]]);
      assert.equal(zeroed.item_count, 3);

      await setGuard(db.db, storeId, { zero_price: 'allow' });
      const allowed = await publish(db.db, storeId, [...items(3, (i) => (i === 0 ? 0 : i === 2 ? 0 : 100)), { offer_id: 'NEW', price: 0 }]);
      assert.equal(allowed.diff.verdict, 'published');
      assert.deepEqual(await prices(db.db, allowed.items_list_id), [['A0', 0], ['A1', 10000], ['A2', 0], ['NEW', 0]]);
    });

    test('size: a list of exactly min_items publishes; one item fewer holds', async () => {
      const storeId = await newStore(db.db);
      await setGuard(db.db, storeId, { min_items: 5, max_removed_pct: 100 });
      const atLimit = await publish(db.db, storeId, items(5));
      assert.equal(atLimit.diff.verdict, 'published');
      const past = await publish(db.db, storeId, items(4));
      assert.equal(past.diff.verdict, 'held');
      assert.deepEqual(past.diff.tripped, [{ check: 'size', count: 4, limit: 5, offenders: [] }]);
      assert.equal((await db.db.priceLists.latest(storeId))!.version, atLimit.version);
    });

    test('a guard value out of range is refused, naming it, and nothing changes', async () => {
      const storeId = await newStore(db.db);
      await setGuard(db.db, storeId, { max_removed_pct: 30 });
      await assert.rejects(setGuard(db.db, storeId, { max_removed_pct: 101, min_items: '0', zero_price: 'maybe', max_price_drop_pct: 40 }), (error) => {
        assert.ok(isAppError(error));
        assert.equal(error.code, 'invalid_guard');
        assert.match(error.detail, /max_removed_pct must be a whole number from 0 to 100/);
        assert.match(error.detail, /min_items/);
        assert.match(error.detail, /zero_price must be hold or allow/);
        return true;
      });
      assert.deepEqual(await db.db.versions.getGuard(storeId), { max_removed_pct: 30, max_price_drop_pct: 50, max_price_rise_pct: 100, min_items: 1, zero_price: 'hold' });
    });

    test('--force publishes a list that would be held, and the diff says what tripped', async () => {
      const storeId = await newStore(db.db);
      await publish(db.db, storeId, items(10));
      const forced = await publish(db.db, storeId, items(2, () => 0), { force: true });
      assert.equal(forced.diff.verdict, 'published');
      assert.equal(forced.diff.forced, true);
      assert.deepEqual(forced.diff.tripped.map((t) => t.check), ['removed', 'zero_price']);
      assert.equal((await db.db.priceLists.latest(storeId))!.version, forced.version);
      assert.deepEqual(await prices(db.db, forced.items_list_id), [['A0', 0], ['A1', 0]]);
    });
  });
}
