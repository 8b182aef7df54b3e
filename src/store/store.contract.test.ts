/**
 * The Database contract: every test runs against every dialect this run can reach (a real SQLite
 * file and, when `npm test` finds one, a real PostgreSQL database), so both behave the same.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { PriceItem } from '../model/price-item.js';
import type { ProfileDefinition } from '../model/profile.js';
import { createTestDatabase, DIALECTS, type Dialect, type TestDatabase } from '../../test/support/dialects.js';
import { openDatabase } from './factory.js';
import { STALE_DRAFT_MS, SUPERSEDED_GRACE_MS } from './item-row.js';
import type { Database, PublicationSummary, SequencedItem } from './types.js';

const FIXTURE = new URL('../../test/fixtures/legacy-sample.json', import.meta.url);

/** A complete item with every optional field empty; tests override what they need. */
function item(offerId: string, fields: Partial<PriceItem> = {}): PriceItem {
  return {
    offer_id: offerId, name: `Item ${offerId}`, price: 100, old_price: null, purchase_price: null, currency: 'RUB',
    available: true, quantity: null, url: null, picture: null, vendor: null, vendor_code: null, barcode: null,
    description: null, category: null, competitors: null, attributes: null, ...fields,
  };
}

const sequenced = (items: readonly PriceItem[], from = 0): SequencedItem[] => items.map((it, i) => ({ seq: from + i, item: it }));

function summaryOf(items: readonly PriceItem[]): PublicationSummary {
  return {
    item_count: items.length,
    available_count: items.filter((it) => it.available).length,
    currencies: [...new Set(items.map((it) => it.currency))].sort(),
    category_paths: [...new Set(items.map((it) => it.category ?? ''))],
  };
}

/** Publishes `items` in one batch and returns the committed list. */
async function publish(db: Database, storeId: string, items: readonly PriceItem[]) {
  const draft = await db.priceLists.beginPublication(storeId);
  assert.deepEqual(await draft.append(sequenced(items)), []);
  return draft.commit(summaryOf(items));
}

async function readAll(db: Database, listId: number, onlyAvailable = false, batchSize?: number): Promise<PriceItem[][]> {
  const batches: PriceItem[][] = [];
  for await (const batch of db.priceLists.readItems(listId, { onlyAvailable, batchSize })) batches.push(batch);
  return batches;
}

const newStoreId = () => `s-${randomBytes(4).toString('hex')}`;

async function createStore(db: Database, currency = 'RUB'): Promise<string> {
  const id = newStoreId();
  await db.stores.create({ id, name: `Store ${id}`, currency, url: null, company: null });
  return id;
}

const PROFILE: ProfileDefinition = {
  name: 'Market', columns: [{ field: 'offer_id', title: 'SKU' }, { value: 'x', title: 'Const', key: 'c' }],
  delimiter: ';', decimal_separator: ',', header: true, bom: false, encoding: 'windows-1251',
};

type RawStatement = [sql: string, ...params: unknown[]];

/**
 * Runs SQL behind the store's back, to age rows past the store's time limits without waiting
 * hours. The statement is given per dialect because the two keep times differently.
 */
async function rawSql(testDb: TestDatabase, statements: { sqlite: RawStatement; postgres: RawStatement }): Promise<Record<string, unknown>[]> {
  if (testDb.dialect === 'sqlite') {
    const [sql, ...params] = statements.sqlite;
    const { default: Sqlite } = await import('better-sqlite3');
    const conn = new Sqlite(testDb.url.slice('sqlite:'.length));
    try {
      const statement = conn.prepare(sql);
      return statement.reader ? (statement.all(...params) as Record<string, unknown>[]) : (statement.run(...params), []);
    } finally {
      conn.close();
    }
  }
  const [sql, ...params] = statements.postgres;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

const backdateLists = (testDb: TestDatabase, storeId: string, ms: number) =>
  rawSql(testDb, {
    sqlite: ['UPDATE price_lists SET created_at = created_at - ?, superseded_at = superseded_at - ? WHERE store_id = ?', ms, ms, storeId],
    postgres: [
      "UPDATE price_lists SET created_at = created_at - $2 * interval '1 millisecond', superseded_at = superseded_at - $2 * interval '1 millisecond' WHERE store_id = $1",
      storeId, ms,
    ],
  });

const backdateRetired = (testDb: TestDatabase, storeId: string, ms: number) =>
  rawSql(testDb, {
    sqlite: ['UPDATE price_lists SET retired_at = retired_at - ? WHERE store_id = ?', ms, storeId],
    postgres: ["UPDATE price_lists SET retired_at = retired_at - $2 * interval '1 millisecond' WHERE store_id = $1", storeId, ms],
  });

const listStatuses = async (testDb: TestDatabase, storeId: string) =>
  (await rawSql(testDb, {
    sqlite: ['SELECT id, status FROM price_lists WHERE store_id = ? ORDER BY id', storeId],
    postgres: ['SELECT id, status FROM price_lists WHERE store_id = $1 ORDER BY id', storeId],
  })).map((r) => `${Number(r.id)}:${r.status}`);

/** A database nobody has migrated yet, for the concurrent-migration test. */
async function unmigratedStores(testDb: TestDatabase, count: number): Promise<{ stores: Database[]; drop: () => Promise<void> }> {
  if (testDb.dialect === 'sqlite') {
    const path = `${testDb.url}.fresh-${randomBytes(4).toString('hex')}.db`;
    const stores = await Promise.all(Array.from({ length: count }, () => openDatabase(path)));
    return { stores, drop: async () => { await Promise.all(stores.map((s) => s.close())); } };
  }
  const { default: pg } = await import('pg');
  const admin = process.env.PRICE_EXPORT_TEST_PG_URL!;
  const name = `pe_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const stores = await Promise.all(Array.from({ length: count }, () => openDatabase(url.toString())));
  return {
    stores,
    drop: async () => {
      await Promise.all(stores.map((s) => s.close()));
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

for (const dialect of DIALECTS) {
  describe(dialect, () => {
    let testDb: TestDatabase;
    let db: Database;
    before(async () => {
      testDb = await createTestDatabase(dialect as Dialect);
      db = testDb.db;
    });
    after(async () => testDb?.drop());

    describe('schema', () => {
      it('reports its dialect and answers ping', async () => {
        assert.equal(db.dialect, dialect);
        await db.ping();
      });

      it('ping throws once the store is closed', async () => {
        const second = await openDatabase(testDb.url);
        await second.ping();
        await second.close();
        await assert.rejects(second.ping());
      });

      it('migrate() again is a no-op that keeps the data', async () => {
        const id = await createStore(db);
        await db.migrate();
        await db.migrate();
        assert.equal((await db.stores.get(id))?.id, id);
      });

      it('two instances migrating a fresh database at once both succeed', async () => {
        const fresh = await unmigratedStores(testDb, 3);
        try {
          await Promise.all(fresh.stores.map((s) => s.migrate()));
          await fresh.stores[0].stores.create({ id: 'after-migrate', name: 'x', currency: 'RUB', url: null, company: null });
          assert.equal((await fresh.stores[1].stores.list()).length, 1);
        } finally {
          await fresh.drop();
        }
      });
    });

    describe('stores', () => {
      it('creates, gets and lists stores', async () => {
        const before = Date.now();
        const created = await db.stores.create({ id: 'zz-shop', name: 'Магазин «Ёлка»', currency: 'USD', url: 'https://shop.example', company: 'Ёлка LLC' });
        assert.ok(created.created_at instanceof Date && Math.abs(created.created_at.getTime() - before) < 60_000);
        assert.deepEqual(await db.stores.get('zz-shop'), created);
        const minimal = await db.stores.create({ id: 'zz-min', name: 'Min', currency: 'RUB', url: null, company: null });
        assert.deepEqual(await db.stores.get('zz-min'), minimal);
        assert.equal(await db.stores.get('no-such-store'), null);
        const ids = (await db.stores.list()).map((s) => s.id);
        assert.deepEqual(ids, [...ids].sort());
        assert.ok(ids.includes('zz-shop') && ids.includes('zz-min'));
      });

      it('refuses a second store with the same id', async () => {
        const id = await createStore(db);
        await assert.rejects(db.stores.create({ id, name: 'again', currency: 'RUB', url: null, company: null }));
      });
    });

    describe('keys', () => {
      it('inserts, gets and lists keys of one store, never exposing the hash', async () => {
        const storeId = await createStore(db);
        const other = await createStore(db);
        const first = await db.keys.insert({ id: `k1-${storeId}`, store_id: storeId, label: 'site', prefix: 'pex_ab', hash: `h1-${storeId}` });
        assert.deepEqual(first, { ...first, store_id: storeId, label: 'site', prefix: 'pex_ab', last_used_at: null, revoked_at: null });
        assert.ok(!('hash' in first));
        const second = await db.keys.insert({ id: `k2-${storeId}`, store_id: storeId, label: null, prefix: 'pex_cd', hash: `h2-${storeId}` });
        await db.keys.insert({ id: `k3-${other}`, store_id: other, label: null, prefix: 'pex_ef', hash: `h3-${other}` });
        assert.deepEqual(await db.keys.get(first.id), first);
        assert.equal(await db.keys.get('no-such-key'), null);
        assert.deepEqual((await db.keys.list(storeId)).map((k) => k.id), [first.id, second.id]);
        assert.ok((await db.keys.list(storeId)).every((k) => !('hash' in k)));
      });

      it('finds a key by hash with its store and the latest price list', async () => {
        const storeId = await createStore(db, 'EUR');
        const key = await db.keys.insert({ id: `k-${storeId}`, store_id: storeId, label: 'l', prefix: 'pex_x', hash: `hash-${storeId}` });
        assert.equal(await db.keys.findByHash('no-such-hash'), null);

        const before = await db.keys.findByHash(`hash-${storeId}`);
        assert.deepEqual(before, { key, store: await db.stores.get(storeId), latest: null });

        const list = await publish(db, storeId, [item('a', { category: 'X / Y' }), item('b', { available: false, currency: 'USD' })]);
        const after = await db.keys.findByHash(`hash-${storeId}`);
        assert.deepEqual(after?.latest, list);
        assert.deepEqual(after?.latest, await db.priceLists.latest(storeId));
        assert.deepEqual(after?.latest?.currencies, ['RUB', 'USD']);
        assert.equal(after?.latest?.category_ids.length, 3);
      });

      it('look-ups asked together each get their own key, a missing one null; a revocation by another connection is seen by the next', async () => {
        const stores = [await createStore(db, 'EUR'), await createStore(db, 'USD')];
        const keys = await Promise.all(stores.map((storeId) => db.keys.insert({ id: `kt-${storeId}`, store_id: storeId, label: null, prefix: 'p', hash: `ht-${storeId}` })));
        const asked = [...stores, 'none', stores[0]].map((storeId) => db.keys.findByHash(`ht-${storeId}`));
        const found = await Promise.all(asked);
        assert.deepEqual(found.map((lookup) => lookup?.key.id ?? null), [keys[0].id, keys[1].id, null, keys[0].id]);
        assert.deepEqual(found.map((lookup) => lookup?.store.currency ?? null), ['EUR', 'USD', null, 'EUR']);
        const other = await openDatabase(testDb.url);
        try {
          await other.keys.revoke(keys[1].id, new Date('2031-01-01T00:00:00Z'));
        } finally {
          await other.close();
        }
        assert.ok((await db.keys.findByHash(`ht-${stores[1]}`))?.key.revoked_at, 'the next look-up sees the revocation');
      });

      it('touches and revokes a key; a second revoke keeps the first time', async () => {
        const storeId = await createStore(db);
        const key = await db.keys.insert({ id: `k-${storeId}`, store_id: storeId, label: null, prefix: 'p', hash: `h-${storeId}` });
        const used = new Date('2031-02-03T04:05:06.789Z');
        await db.keys.touch(key.id, used);
        assert.deepEqual((await db.keys.get(key.id))?.last_used_at, used);

        const revokedAt = new Date('2031-02-04T00:00:00.123Z');
        const revoked = await db.keys.revoke(key.id, revokedAt);
        assert.deepEqual(revoked?.revoked_at, revokedAt);
        assert.deepEqual((await db.keys.revoke(key.id, new Date('2032-01-01T00:00:00Z')))?.revoked_at, revokedAt);
        assert.deepEqual((await db.keys.findByHash(`h-${storeId}`))?.key.revoked_at, revokedAt);
        assert.equal(await db.keys.revoke('no-such-key', revokedAt), null);
      });

      it('writes every key touched in one turn, each with its own time, and no other key', async () => {
        const storeId = await createStore(db);
        // More than one statement's worth (keys.ts TOUCHES_PER_STATEMENT), a key touched twice.
        const ids = Array.from({ length: 150 }, (_, i) => `kt-${storeId}-${i}`);
        for (const id of ids) await db.keys.insert({ id, store_id: storeId, label: null, prefix: 'p', hash: `h-${id}` });
        const at = (i: number) => new Date(Date.UTC(2031, 2, 3, 4, 5, 6) + i * 1_001);
        const touched = ids.slice(0, 149);
        await Promise.all([...touched.map((id, i) => db.keys.touch(id, at(i))), db.keys.touch(ids[0], at(500))]);
        const written = await Promise.all(ids.map(async (id) => (await db.keys.get(id))?.last_used_at ?? null));
        assert.deepEqual(written, [at(500), ...touched.slice(1).map((_, i) => at(i + 1)), null]);
      });
    });

    describe('profiles', () => {
      it('creates, replaces with revision + 1, and refuses another store\'s id', async () => {
        const storeId = await createStore(db);
        const other = await createStore(db);
        const created = await db.profiles.put(storeId, PROFILE);
        assert.ok(created && created.id > 0);
        assert.deepEqual(created, { ...PROFILE, id: created.id, store_id: storeId, revision: 1, updated_at: created.updated_at });
        assert.ok(created.updated_at instanceof Date);

        const renamed = { ...PROFILE, name: 'Маркет 🛒', columns: [{ field: 'attributes.цвет', title: 'Цвет' }] };
        const replaced = await db.profiles.put(storeId, renamed, created.id);
        assert.deepEqual(replaced, { ...renamed, id: created.id, store_id: storeId, revision: 2, updated_at: replaced!.updated_at });
        assert.deepEqual(await db.profiles.get(storeId, created.id), replaced);

        assert.equal(await db.profiles.put(other, PROFILE, created.id), null);
        assert.equal(await db.profiles.put(storeId, PROFILE, 999_999_999), null);
        assert.deepEqual(await db.profiles.get(storeId, created.id), replaced);
        assert.equal(await db.profiles.get(storeId, 999_999_999), null);
        assert.equal(await db.profiles.get(other, created.id), null, 'another store\'s id misses like an unknown one');
      });

      it('lists the profiles of one store in id order, ids unique across stores', async () => {
        const storeId = await createStore(db);
        const other = await createStore(db);
        const a = await db.profiles.put(storeId, PROFILE);
        const b = await db.profiles.put(other, PROFILE);
        const c = await db.profiles.put(storeId, { ...PROFILE, name: 'second' });
        assert.notEqual(a!.id, b!.id);
        assert.deepEqual((await db.profiles.list(storeId)).map((p) => p.id), [a!.id, c!.id]);
        assert.deepEqual(await db.profiles.list(newStoreId()), []);
      });
    });

    describe('publication', () => {
      it('lists every store that has published with its latest list, and no other', async () => {
        const quiet = await createStore(db);
        const a = await createStore(db);
        await publish(db, a, [item('x')]);
        const a2 = await publish(db, a, [item('x'), item('y')]);
        const latest = await db.priceLists.listLatest();
        assert.equal(latest.some((entry) => entry.store.id === quiet), false);
        const entry = latest.find((candidate) => candidate.store.id === a);
        assert.deepEqual(entry, { store: await db.stores.get(a), list: a2 });
      });

      it('commits versions 1, 2, 3 per store, independent between stores', async () => {
        const a = await createStore(db);
        const b = await createStore(db);
        assert.equal(await db.priceLists.latest(a), null);
        const a1 = await publish(db, a, [item('x')]);
        const b1 = await publish(db, b, [item('y'), item('z')]);
        const a2 = await publish(db, a, [item('x'), item('w', { available: false })]);
        const a3 = await publish(db, a, [item('v')]);
        assert.deepEqual([a1.version, a2.version, a3.version, b1.version], [1, 2, 3, 1]);
        assert.deepEqual(await db.priceLists.latest(a), a3);
        assert.deepEqual(await db.priceLists.latest(b), b1);
        assert.deepEqual({ ...a2, id: 0, published_at: null }, {
          id: 0, store_id: a, version: 2, published_at: null, item_count: 2, available_count: 1, currencies: ['RUB'], category_ids: a2.category_ids,
          items_list_id: a2.id,
        });
        assert.ok(a2.published_at.getTime() <= a3.published_at.getTime());
        assert.ok(Math.abs(a3.published_at.getTime() - Date.now()) < 60_000);
      });

      it('reports repeated offer_ids with their seq, within a batch and across batches, and keeps the first', async () => {
        const storeId = await createStore(db);
        const draft = await db.priceLists.beginPublication(storeId);
        const first = await draft.append(sequenced([item('a'), item('b'), item('a', { name: 'again' }), item('c')]));
        assert.deepEqual(first, [{ seq: 2, offer_id: 'a' }]);
        const second = await draft.append(sequenced([item('d'), item('b'), item('c'), item('e')], 4));
        assert.deepEqual(second, [{ seq: 5, offer_id: 'b' }, { seq: 6, offer_id: 'c' }]);
        const list = await draft.commit({ item_count: 5, available_count: 5, currencies: ['RUB'], category_paths: [''] });
        const items = (await readAll(db, list.id)).flat();
        assert.deepEqual(items.map((it) => [it.offer_id, it.name]), [['a', 'Item a'], ['b', 'Item b'], ['c', 'Item c'], ['d', 'Item d'], ['e', 'Item e']]);
      });

      it('abort leaves the previous latest and its items untouched', async () => {
        const storeId = await createStore(db);
        const kept = await publish(db, storeId, [item('old-1'), item('old-2')]);
        const draft = await db.priceLists.beginPublication(storeId);
        await draft.append(sequenced([item('new-1')]));
        await draft.abort();
        assert.deepEqual(await listStatuses(testDb, storeId), [`${kept.id}:published`], 'the draft and its rows are gone');
        assert.deepEqual(await db.priceLists.latest(storeId), kept);
        assert.deepEqual((await readAll(db, kept.id)).flat().map((it) => it.offer_id), ['old-1', 'old-2']);
        const next = await publish(db, storeId, [item('new-2')]);
        assert.equal(next.version, 2);
      });

      it('an uncommitted draft is invisible to readers', async () => {
        const storeId = await createStore(db);
        const draft = await db.priceLists.beginPublication(storeId);
        await draft.append(sequenced([item('draft-only')]));
        assert.equal(await db.priceLists.latest(storeId), null);
        await draft.abort();
      });

      it('two concurrent publications of one store both commit, with distinct versions', async () => {
        const storeId = await createStore(db);
        await publish(db, storeId, [item('base')]);
        const [d1, d2] = await Promise.all([db.priceLists.beginPublication(storeId), db.priceLists.beginPublication(storeId)]);
        await Promise.all([d1.append(sequenced([item('one')])), d2.append(sequenced([item('two'), item('three')]))]);
        const [l1, l2] = await Promise.all([d1.commit(summaryOf([item('one')])), d2.commit(summaryOf([item('two'), item('three')]))]);
        assert.deepEqual([l1.version, l2.version].sort(), [2, 3]);
        const latest = await db.priceLists.latest(storeId);
        assert.deepEqual(latest, l1.version === 3 ? l1 : l2);
        const newer = l1.version === 3 ? l1 : l2;
        const older = l1.version === 3 ? l2 : l1;
        assert.ok(newer.published_at.getTime() >= older.published_at.getTime(), 'a later version is never published earlier');
      });

      it('keeps the newest versions; drops one out of retention after the grace period, and drafts left stale by a crash', async () => {
        const storeId = await createStore(db);
        const keepTwo = async (offer: string) => {
          const draft = await db.priceLists.beginPublication(storeId);
          await draft.append(sequenced([item(offer)]));
          return draft.commit(summaryOf([item(offer)]), { hold: false, quarantine: null, diff: '{}', keepVersions: 2 });
        };
        const v1 = await keepTwo('v1');
        const v2 = await keepTwo('v2');
        const crashed = await db.priceLists.beginPublication(storeId);
        await crashed.append(sequenced([item('lost')]));
        await backdateLists(testDb, storeId, STALE_DRAFT_MS + 60_000);
        // v3 retires v1 now; a download of v1 in flight still finishes: its rows stay until a sweep after the grace period.
        const v3 = await keepTwo('v3');
        await db.versions.sweep(storeId);
        assert.deepEqual((await readAll(db, v1.id)).flat().map((it) => it.offer_id), ['v1']);
        assert.equal(await db.versions.getVersion(storeId, v1.version), null);
        await backdateRetired(testDb, storeId, SUPERSEDED_GRACE_MS + 1000);
        await db.versions.sweep(storeId);
        assert.deepEqual(await readAll(db, v1.id), []);
        assert.deepEqual((await readAll(db, v2.id)).flat().map((it) => it.offer_id), ['v2']);
        assert.deepEqual(await listStatuses(testDb, storeId), [`${v2.id}:published`, `${v3.id}:published`]);
      });

      it('refuses to commit a draft swept as stale by another publication, and keeps the previous latest', async () => {
        const storeId = await createStore(db);
        const kept = await publish(db, storeId, [item('kept')]);
        const slow = await db.priceLists.beginPublication(storeId);
        await slow.append(sequenced([item('slow')]));
        await backdateLists(testDb, storeId, STALE_DRAFT_MS + 60_000);
        // The next publication takes the slow draft for one left by a crash and removes it.
        const sweeper = await db.priceLists.beginPublication(storeId);
        await sweeper.abort();
        await assert.rejects(slow.commit(summaryOf([item('slow')])));
        assert.deepEqual(await db.priceLists.latest(storeId), kept);
        assert.deepEqual((await readAll(db, kept.id)).flat().map((it) => it.offer_id), ['kept']);
        const next = await publish(db, storeId, [item('next')]);
        assert.equal(next.version, 2, 'the refused commit used no version');
      });

      it('publications of many stores at once each get their own version 1', async () => {
        const ids = await Promise.all(Array.from({ length: 5 }, () => createStore(db)));
        const lists = await Promise.all(ids.map((id) => publish(db, id, [item('same-offer', { category: 'Shared / Path' })])));
        assert.deepEqual(lists.map((l) => l.version), [1, 1, 1, 1, 1]);
      });
    });

    describe('readItems', () => {
      const ITEMS = Array.from({ length: 10 }, (_, i) => item(`o-${i}`, { available: i % 3 !== 0, price: i * 100 + 1 }));

      it('returns items in seq order, in batches of batchSize, with and without onlyAvailable', async () => {
        const storeId = await createStore(db);
        const draft = await db.priceLists.beginPublication(storeId);
        // Appended out of order: seq decides the order readers see.
        await draft.append(sequenced(ITEMS.slice(5), 5));
        await draft.append(sequenced(ITEMS.slice(0, 5)));
        const list = await draft.commit(summaryOf(ITEMS));
        assert.deepEqual(list.available_count, 6);

        const all = await readAll(db, list.id, false, 3);
        assert.deepEqual(all.map((b) => b.length), [3, 3, 3, 1]);
        assert.deepEqual(all.flat(), ITEMS);

        const available = await readAll(db, list.id, true, 3);
        assert.deepEqual(available.map((b) => b.length), [3, 3]);
        assert.deepEqual(available.flat(), ITEMS.filter((it) => it.available));

        assert.deepEqual((await readAll(db, list.id, false, 5)).map((b) => b.length), [5, 5]);
        assert.deepEqual((await readAll(db, list.id)).map((b) => b.length), [10]);
        assert.deepEqual(await readAll(db, 987_654_321), []);
      });

      it('keeps order and exact batch sizes across many pages, with and without onlyAvailable', async () => {
        const many = Array.from({ length: 12_345 }, (_, i) => item(`m-${i}`, { available: i % 7 !== 0, price: i, quantity: i % 5 === 0 ? null : i }));
        const storeId = await createStore(db);
        const draft = await db.priceLists.beginPublication(storeId);
        for (let from = 0; from < many.length; from += 4000) await draft.append(sequenced(many.slice(from, from + 4000), from));
        const list = await draft.commit(summaryOf(many));
        const all = await readAll(db, list.id, false, 5000);
        assert.deepEqual(all.map((b) => b.length), [5000, 5000, 2345]);
        assert.deepEqual(all.flat(), many);
        const available = many.filter((it) => it.available);
        const filtered = await readAll(db, list.id, true, 4096);
        assert.deepEqual(filtered.map((b) => b.length), [4096, 4096, available.length - 8192]);
        assert.deepEqual(filtered.flat(), available);
      });

      it('round-trips every PriceItem field', async () => {
        const storeId = await createStore(db);
        const rich = item('Ёж-1 📦\\N', {
          name: 'Смартфон «Галактика» 📱\ttab\nnewline\rcr \\backslash\\ "quote" \\N',
          price: 9_007_199_254_740_99, old_price: 0, purchase_price: 123_456_789_01, currency: 'USD', available: false, quantity: 2 ** 40,
          url: 'https://shop.example/p/ё?x=1&y=2', picture: 'http://img.example/1.jpg', vendor: 'Вендор', vendor_code: 'VC-1',
          barcode: '4601234567890', description: '', category: 'Электроника / Смартфоны 📱',
          competitors: [
            { name: 'shop-b.example', price: 19_490_00, url: 'https://b.example/x', available: true },
            { name: 'магазин-с', price: 1, url: null, available: null },
          ],
          attributes: { 'цвет': 'красный', 'z-last': '1', 'a-first': '🙂', '': 'empty key', 'tab\tkey': 'line\nvalue' },
        });
        const empty = item('plain', { quantity: 0, price: 0 });
        const list = await publish(db, storeId, [rich, empty]);
        const [back, plain] = (await readAll(db, list.id)).flat();
        assert.deepEqual(back, rich);
        // Attribute order is part of the item (it orders YML params).
        assert.deepEqual(Object.keys(back.attributes!), Object.keys(rich.attributes!));
        assert.deepEqual(plain, empty);
        assert.equal(typeof back.price, 'number');
        assert.equal(typeof back.quantity, 'number');
        assert.equal(typeof back.available, 'boolean');
      });

      it('withExtra false returns the stored columns and leaves every other field null', async () => {
        const storeId = await createStore(db);
        const rich = item('x-1', { vendor: 'V', category: 'A / B', attributes: { a: '1' }, competitors: [{ name: 'c', price: 1, url: null, available: null }], old_price: 5, url: 'https://s.example/x' });
        const list = await publish(db, storeId, [rich]);
        const batches: PriceItem[][] = [];
        for await (const batch of db.priceLists.readItems(list.id, { onlyAvailable: false, withExtra: false })) batches.push(batch);
        assert.deepEqual(batches.flat(), [{ ...rich, vendor: null, category: null, attributes: null, competitors: null }]);
      });
    });

    describe('categories', () => {
      it('keeps ids stable across publications that add categories, with every level and parent', async () => {
        const storeId = await createStore(db);
        const first = await publish(db, storeId, [item('a', { category: 'Дом / Кухня' }), item('b')]);
        const cats1 = await db.priceLists.categories(storeId, first.category_ids);
        assert.deepEqual(cats1.map((c) => c.path).sort(), ['', 'Дом', 'Дом / Кухня']);
        const byPath1 = new Map(cats1.map((c) => [c.path, c]));
        assert.equal(byPath1.get('Дом / Кухня')!.parent_id, byPath1.get('Дом')!.id);
        assert.equal(byPath1.get('Дом')!.parent_id, null);
        assert.equal(byPath1.get('')!.parent_id, null);
        assert.ok(cats1.every((c) => c.store_id === storeId && Number.isInteger(c.id) && c.id > 0));

        const second = await publish(db, storeId, [
          item('c', { category: 'Дом / Кухня / Ножи' }), item('d', { category: 'Дом / Сад' }), item('e', { category: 'Авто' }),
        ]);
        const cats2 = await db.priceLists.categories(storeId, second.category_ids);
        const byPath2 = new Map(cats2.map((c) => [c.path, c]));
        assert.deepEqual([...byPath2.keys()].sort(), ['Авто', 'Дом', 'Дом / Кухня', 'Дом / Кухня / Ножи', 'Дом / Сад']);
        assert.equal(second.category_ids.length, 5);
        assert.equal(byPath2.get('Дом')!.id, byPath1.get('Дом')!.id);
        assert.equal(byPath2.get('Дом / Кухня')!.id, byPath1.get('Дом / Кухня')!.id);
        assert.equal(byPath2.get('Дом / Кухня / Ножи')!.parent_id, byPath1.get('Дом / Кухня')!.id);
        assert.equal(byPath2.get('Дом / Сад')!.parent_id, byPath1.get('Дом')!.id);
        assert.equal(new Set(second.category_ids).size, 5);

        // Another store's same path gets its own id, and ids of one store are not readable through another.
        const other = await createStore(db);
        const otherList = await publish(db, other, [item('x', { category: 'Дом' })]);
        assert.notEqual(otherList.category_ids[0], byPath1.get('Дом')!.id);
        assert.deepEqual(await db.priceLists.categories(other, first.category_ids), []);
        assert.deepEqual(await db.priceLists.categories(storeId, []), []);
      });
    });
  });
}
