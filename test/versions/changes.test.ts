/**
 * CONTRACT §11 through the domain, on every dialect: what the changes feed answers since a
 * version (json read back with JSON.parse), across one and several versions, changes undone,
 * removals and re-adds, rollbacks, quarantine, profiles and the filter, the since rules; and a
 * property test: applying the changes from N to the list at N gives exactly the list at M.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { REMOVALS_HELD } from '../../src/domain/changes.js';
import { createExportService } from '../../src/domain/exports.js';
import { putProfile } from '../../src/domain/profiles.js';
import { normalizeItem } from '../../src/domain/item-validation.js';
import { releaseHeld, releaseQuarantine, rollback } from '../../src/domain/versions.js';
import { DEFAULT_GUARD } from '../../src/model/versions.js';
import { isAppError } from '../../src/errors/app-error.js';
import { EXPORT_WRITERS } from '../../src/formats/registry.js';
import type { Database } from '../../src/store/types.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { items, newStore, publish, type ItemInput } from './versions-support.js';

interface ChangesJson {
  since: number;
  version: number;
  published_at: string;
  changed: Record<string, unknown>[];
  removed: string[];
}

async function changes(db: Database, storeId: string, since: number, options: { profileId?: number; onlyAvailable?: boolean } = {}): Promise<ChangesJson> {
  const service = createExportService({ db, writers: EXPORT_WRITERS });
  const store = (await db.stores.get(storeId))!;
  const list = await db.priceLists.latest(storeId);
  const resolved = await service.resolveChanges({ store, list }, { format: 'json', onlyAvailable: options.onlyAvailable ?? false, profileId: options.profileId ?? null, since });
  const chunks: Buffer[] = [];
  for await (const chunk of service.open(resolved)) chunks.push(Buffer.from(chunk));
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChangesJson;
}

const ids = (answer: ChangesJson) => answer.changed.map((item) => item.offer_id as string).sort();
const force = { force: true };

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

for (const dialect of DIALECTS) {
  describe(`the changes feed (${dialect})`, () => {
    let t: TestDatabase;
    let db: Database;
    before(async () => { t = await createTestDatabase(dialect); db = t.db; });
    after(async () => t.drop());

    test('since the previous version: an added, a changed and a removed offer; the rest is not mentioned', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(10));
      const next = await publish(db, storeId, [...items(10, (i) => (i === 3 ? 101 : 100)).filter((it) => it.offer_id !== 'A5'), { offer_id: 'NEW', price: 5 }]);
      const answer = await changes(db, storeId, first.version);
      assert.equal(answer.since, first.version);
      assert.equal(answer.version, next.version);
      assert.equal(answer.published_at, next.published_at.toISOString());
      assert.deepEqual(ids(answer), ['A3', 'NEW']);
      assert.deepEqual(answer.changed.find((item) => item.offer_id === 'A3'), { offer_id: 'A3', name: 'Item A3', price: 101, old_price: null, currency: 'RUB', available: true, quantity: null, url: null });
      assert.deepEqual(answer.removed, ['A5']);
    });

    test('across several versions: an item changed twice appears once with its latest values; added then removed is nothing', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(5));
      await publish(db, storeId, [...items(5, (i) => (i === 0 ? 110 : 100)), { offer_id: 'TEMP', price: 1 }], force);
      const last = await publish(db, storeId, items(5, (i) => (i === 0 ? 120 : i === 1 ? 90 : 100)), force);
      const answer = await changes(db, storeId, first.version);
      assert.equal(answer.version, last.version);
      assert.deepEqual(answer.changed.map((item) => [item.offer_id, item.price]).sort(), [['A0', 120], ['A1', 90]]);
      assert.deepEqual(answer.removed, []);
    });

    test('changed, then changed back: no change; removed, then re-added as it was: no change, re-added otherwise: an upsert', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(6));
      await publish(db, storeId, items(6, (i) => (i === 0 ? 150 : 100)).filter((it) => it.offer_id !== 'A1' && it.offer_id !== 'A2'), force);
      await publish(db, storeId, items(6).map((it) => (it.offer_id === 'A2' ? { ...it, name: 'Renamed' } : it)), force);
      const answer = await changes(db, storeId, first.version);
      assert.deepEqual(answer.changed.map((item) => [item.offer_id, item.name]), [['A2', 'Renamed']]);
      assert.deepEqual(answer.removed, []);
    });

    test('a rollback in between counts by the rows it serves again', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(4));
      const second = await publish(db, storeId, items(4, (i) => (i === 0 ? 130 : 100)), force);
      const back = await rollback(db, storeId, first.version, 10);
      // Since the first version, the rollback undid everything; since the second, A0 went back to 100.
      assert.deepEqual(await changes(db, storeId, first.version), { since: first.version, version: back.list.version, published_at: back.list.published_at.toISOString(), changed: [], removed: [] });
      const sinceSecond = await changes(db, storeId, second.version);
      assert.deepEqual(sinceSecond.changed.map((item) => [item.offer_id, item.price]), [['A0', 100]]);
      const after = await publish(db, storeId, items(4, (i) => (i === 3 ? 99 : 100)), force);
      const overRollback = await changes(db, storeId, second.version);
      assert.equal(overRollback.version, after.version);
      assert.deepEqual(overRollback.changed.map((item) => [item.offer_id, item.price]).sort(), [['A0', 100], ['A3', 99]]);
    });

    test('a quarantined item counts by the value served: not a change until it is released', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(4));
      // A0 drops 90 %: quarantined, still served at 100.00; A1 moves within the guard.
      // A new item at price 0 is quarantined too, and left out.
      const next = await publish(db, storeId, [...items(4, (i) => (i === 0 ? 10 : i === 1 ? 95 : 100)), { offer_id: 'FREE', price: 0 }]);
      assert.equal(next.diff.verdict, 'published_with_quarantine');
      assert.deepEqual(await changes(db, storeId, first.version), {
        since: first.version, version: next.version, published_at: next.published_at.toISOString(),
        changed: [{ offer_id: 'A1', name: 'Item A1', price: 95, old_price: null, currency: 'RUB', available: true, quantity: null, url: null }], removed: [],
      });
      const released = await releaseQuarantine(db, storeId, null, 10);
      assert.deepEqual((await changes(db, storeId, next.version)).changed.map((item) => [item.offer_id, item.price]), [['A0', 10], ['FREE', 0]]);
      assert.equal((await changes(db, storeId, first.version)).version, released.list.version);
    });

    test('a profile judges by its columns: a description edit is a change only where the description shows; a price change always is', async () => {
      const storeId = await newStore(db);
      const withDescription = await putProfile(db, storeId, { name: 'full', columns: [{ field: 'offer_id', title: 'id' }, { field: 'description', title: 'about' }] });
      const nameOnly = await putProfile(db, storeId, { name: 'names', columns: [{ field: 'name', title: 'name' }] });
      const first = await publish(db, storeId, items(3).map((it) => ({ ...it, description: 'old' })));
      await publish(db, storeId, items(3, (i) => (i === 2 ? 105 : 100)).map((it) => ({ ...it, description: it.offer_id === 'A1' ? 'new' : 'old' })), force);
      assert.deepEqual(ids(await changes(db, storeId, first.version)), ['A2']);
      assert.deepEqual(ids(await changes(db, storeId, first.version, { profileId: withDescription.id })), ['A1', 'A2']);
      // A profile without offer_id still names each item: offer_id comes first.
      const names = await changes(db, storeId, first.version, { profileId: nameOnly.id });
      assert.deepEqual(names.changed, [{ offer_id: 'A2', name: 'Item A2' }]);
    });

    test('with only_available, an item that became unavailable is a removal, and one that became available an addition', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(3).map((it) => ({ ...it, available: it.offer_id !== 'A2' })));
      await publish(db, storeId, items(3).map((it) => ({ ...it, available: it.offer_id !== 'A0' })), force);
      const filtered = await changes(db, storeId, first.version, { onlyAvailable: true });
      assert.deepEqual(ids(filtered), ['A2']);
      assert.deepEqual(filtered.removed, ['A0']);
      const all = await changes(db, storeId, first.version);
      assert.deepEqual(all.changed.map((item) => [item.offer_id, item.available]).sort(), [['A0', false], ['A2', true]]);
      assert.deepEqual(all.removed, []);
    });

    test('since the latest: nothing changed; beyond it: 400; out of retention or never published: 410', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(2));
      await publish(db, storeId, items(2, () => 101), { ...force, keepVersions: 2 });
      const last = await publish(db, storeId, items(2, () => 102), { ...force, keepVersions: 2 });
      assert.deepEqual(await changes(db, storeId, last.version), { since: last.version, version: last.version, published_at: last.published_at.toISOString(), changed: [], removed: [] });
      assert.equal(await refusal(changes(db, storeId, last.version + 1)), 'invalid_parameter');
      assert.equal(await refusal(changes(db, storeId, first.version)), 'since_too_old');
      assert.deepEqual((await changes(db, storeId, last.version - 1)).changed.map((item) => item.price), [102, 102]);
    });

    test('a held version, released later, counts against the version before it', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(10));
      const held = await publish(db, storeId, items(10, (i) => (i === 9 ? 109 : 100)).slice(4));
      assert.equal(held.diff.verdict, 'held');
      assert.equal(await refusal(changes(db, storeId, held.version)), 'invalid_parameter');
      await releaseHeld(db, storeId, held.version, 10);
      const answer = await changes(db, storeId, first.version);
      assert.deepEqual(answer.changed.map((item) => [item.offer_id, item.price]), [['A9', 109]]);
      assert.deepEqual(answer.removed, ['A0', 'A1', 'A2', 'A3']);
    });

    test('a publication overtaken between its comparison and its commit records its changes again, against what it replaces', async () => {
      const storeId = await newStore(db);
      const first = await publish(db, storeId, items(3));
      // Compared with the first version (which records its changes against it) …
      const draft = await db.priceLists.beginPublication(storeId);
      const rows = items(3, (i) => (i === 0 ? 150 : 100)).map((it) => normalizeItem(it, 'RUB').item!);
      await draft.append(rows.map((item, seq) => ({ seq, item })));
      const latest = await db.priceLists.latest(storeId);
      await db.versions.compareDraft(draft.id, { items: latest!.items_list_id, count: latest!.item_count }, rows.length, DEFAULT_GUARD);
      // … then another publication goes out first …
      const overtaking = await publish(db, storeId, items(3, (i) => (i === 1 ? 120 : 100)), force);
      // … and the draft commits after it.
      const committed = await draft.commit({ item_count: 3, available_count: 3, currencies: ['RUB'], category_paths: [''] });
      assert.deepEqual((await changes(db, storeId, overtaking.version)).changed.map((item) => [item.offer_id, item.price]), [['A0', 150], ['A1', 100]]);
      const sinceFirst = await changes(db, storeId, first.version);
      assert.equal(sinceFirst.version, committed.version);
      assert.deepEqual(sinceFirst.changed.map((item) => [item.offer_id, item.price]), [['A0', 150]]);
    });

    test('more removals than are held in memory: the removals are read in a second pass, and all of them come', async () => {
      const storeId = await newStore(db);
      const count = REMOVALS_HELD + 5;
      const first = await publish(db, storeId, [...items(count), ...items(3, () => 100, 'KEEP')]);
      await publish(db, storeId, items(3, (i) => (i === 0 ? 101 : 100), 'KEEP'), force);
      const answer = await changes(db, storeId, first.version);
      assert.deepEqual(ids(answer), ['KEEP0']);
      assert.equal(answer.removed.length, count);
      assert.equal(new Set(answer.removed).size, count);
    });

    test('property: the changes from N applied to the list at N give exactly the list at M', async () => {
      const offers = ['A', 'B', 'C', 'D', 'E', 'F'];
      const itemArb = fc.record({ price: fc.integer({ min: 1, max: 4 }), name: fc.constantFrom('x', 'y'), available: fc.boolean() });
      const listArb = fc.dictionary(fc.constantFrom(...offers), itemArb, { minKeys: 1 });
      await fc.assert(
        fc.asyncProperty(fc.array(listArb, { minLength: 2, maxLength: 5 }), fc.boolean(), async (lists, onlyAvailable) => {
          const storeId = await newStore(db);
          const versions: number[] = [];
          const served: Map<string, ItemInput>[] = [];
          for (const list of lists) {
            const rows: ItemInput[] = Object.entries(list).map(([offer_id, it]) => ({ offer_id, ...it }));
            versions.push((await publish(db, storeId, rows, force)).version);
            served.push(new Map(rows.filter((it) => !onlyAvailable || it.available).map((it) => [it.offer_id, it])));
          }
          const shown = (it: Record<string, unknown>) => `${it.name}|${Number(it.price)}|${it.available}`;
          const expected = new Map([...served.at(-1)!].map(([id, it]) => [id, shown(it)]));
          for (let n = 0; n < versions.length; n++) {
            const answer = await changes(db, storeId, versions[n], { onlyAvailable });
            const applied = new Map([...served[n]].map(([id, it]) => [id, shown(it)]));
            for (const id of answer.removed) assert.ok(applied.delete(id), `removed ${id} was not in version ${versions[n]}`);
            for (const item of answer.changed) {
              // Only what changed is sent.
              assert.notEqual(applied.get(item.offer_id as string), shown(item));
              applied.set(item.offer_id as string, shown(item));
            }
            assert.deepEqual(new Map([...applied].sort()), new Map([...expected].sort()));
          }
        }),
        { numRuns: 25 },
      );
    });
  });
}
