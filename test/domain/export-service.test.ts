import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createExportService, type ExportRequest } from '../../src/domain/exports.js';
import { putProfile } from '../../src/domain/profiles.js';
import type { RecordReader } from '../../src/model/record-spec.js';
import type { ExportMeta, ExportWriter, RecordSourceWriter, WriterNeeds } from '../../src/model/export-writer.js';
import type { Database } from '../../src/store/types.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { publishJson, storeWithKey } from '../support/test-app.js';

/**
 * The export use case over a real database, with writers made for the test: what the domain
 * reads depends on what a writer declares, and nothing is read twice.
 */

/** What a test writer saw: the meta, each pass over the items, and whether it was given records. */
interface Seen {
  meta: ExportMeta | null;
  passes: string[][];
  records: RecordReader | null | undefined;
}

function probeWriter(format: string, needs: WriterNeeds, passes = 1): ExportWriter & { seen: Seen } {
  const seen: Seen = { meta: null, passes: [], records: undefined };
  return {
    format,
    extension: format,
    needs,
    seen,
    contentType: (meta) => `text/plain; columns=${meta.columns.length}`,
    async *render(items, meta, ...rest: unknown[]) {
      seen.meta = meta;
      seen.records = rest[0] as RecordReader | null | undefined;
      for (let pass = 0; pass < passes; pass++) {
        const ids: string[] = [];
        for await (const batch of items) for (const item of batch) ids.push(item.offer_id + (item.vendor === null ? '' : `:${item.vendor}`));
        seen.passes.push(ids);
      }
      yield Buffer.from(seen.passes.map((ids) => ids.join(',')).join('\n'));
    },
  };
}

/** The real database, with the reads the domain makes counted. */
function counting(db: Database): { db: Database; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  /** Each repository's methods counted as `repository.method`. */
  const countedRepository = <T extends object>(repositoryName: string, repository: T): T =>
    new Proxy(repository, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const counted = `${repositoryName}.${String(name)}`;
          calls.set(counted, (calls.get(counted) ?? 0) + 1);
          return value.apply(target, args);
        };
      },
    });
  const counted: Database = {
    ...db,
    stores: countedRepository('stores', db.stores),
    keys: countedRepository('keys', db.keys),
    profiles: countedRepository('profiles', db.profiles),
    priceLists: countedRepository('priceLists', db.priceLists),
  };
  return { db: counted, calls };
}

const drain = async (bytes: AsyncIterable<Uint8Array>) => {
  for await (const _ of bytes);
};

for (const dialect of DIALECTS) {
  describe(`the export service (${dialect})`, () => {
    let testDb: TestDatabase;
    before(async () => {
      testDb = await createTestDatabase(dialect);
      await storeWithKey(testDb.db, 'svc-shop');
      await publishJson(testDb.db, 'svc-shop', [
        { offer_id: 'A', name: 'a', price: 1, vendor: 'Acme', category: 'Tools / Saws' },
        { offer_id: 'B', name: 'b', price: 2, quantity: 0 },
        { offer_id: 'C', name: 'c', price: 3, vendor: 'Bolt', category: 'Tools' },
      ]);
    });
    after(async () => testDb.drop());

    const subject = async () => {
      const owner = (await testDb.db.stores.get('svc-shop'))!;
      return { store: owner, list: await testDb.db.priceLists.latest('svc-shop') };
    };
    const request = (overrides: Partial<ExportRequest> = {}): ExportRequest => ({ endpoint: 'prices', format: 'probe', onlyAvailable: false, profileId: null, ...overrides });

    test('the profile is read once per export, in resolve; open reads none', async () => {
      const profile = await putProfile(testDb.db, 'svc-shop', { name: 'p', columns: [{ field: 'offer_id', title: 'SKU' }], delimiter: ';' });
      const { db, calls } = counting(testDb.db);
      const writer = probeWriter('probe', { fields: 'columns', categories: false });
      const exports = createExportService({ db, writers: { formats: { probe: writer }, summary: writer } });
      const resolved = await exports.resolve(await subject(), request({ profileId: profile.id }));
      assert.equal(calls.get('profiles.get'), 1);
      assert.equal(resolved.variant.profileRevision, profile.revision);
      const { list } = await subject();
      assert.equal(resolved.lastModified.getTime(), Math.max(profile.updated_at.getTime(), list!.published_at.getTime()), 'Last-Modified: the later of publication and profile edit');
      assert.equal(resolved.contentType(), 'text/plain; columns=1');
      await drain(exports.open(resolved));
      assert.equal(calls.get('profiles.get'), 1, 'open reads no profile');
      assert.deepEqual(writer.seen.passes, [['A', 'B', 'C']]);
    });

    test('categories and every field are read only for a writer that declares it needs them', async () => {
      const { db, calls } = counting(testDb.db);
      const plain = probeWriter('plain', { fields: 'columns', categories: false });
      const rich = probeWriter('rich', { fields: 'all', categories: true });
      const exports = createExportService({ db, writers: { formats: { plain, rich }, summary: plain } });
      await drain(exports.open(await exports.resolve(await subject(), request({ format: 'plain' }))));
      assert.equal(calls.get('priceLists.categories'), undefined, 'no categories for a writer that does not ask');
      assert.deepEqual(plain.seen.meta!.categories, []);
      assert.deepEqual(plain.seen.passes, [['A', 'B', 'C']], 'legacy columns only: no vendor read');

      await drain(exports.open(await exports.resolve(await subject(), request({ format: 'rich' }))));
      assert.equal(calls.get('priceLists.categories'), 1);
      assert.deepEqual(rich.seen.meta!.categories.map((c) => c.path), ['Tools', 'Tools / Saws', '']);
      assert.deepEqual(rich.seen.passes, [['A:Acme', 'B', 'C:Bolt']], 'every field read');
    });

    test('a writer may read the items in several passes; the summary endpoint takes the summary writer', async () => {
      const single = probeWriter('single', { fields: 'columns', categories: false });
      const summary = probeWriter('xlsx', { fields: 'all', categories: false }, 3);
      const exports = createExportService({ db: testDb.db, writers: { formats: { single }, summary } });
      const resolved = await exports.resolve(await subject(), request({ endpoint: 'summary', format: 'xlsx', onlyAvailable: true }));
      assert.equal(resolved.variant.endpoint, 'summary');
      await drain(exports.open(resolved));
      assert.deepEqual(summary.seen.passes, [['A:Acme', 'C:Bolt'], ['A:Acme', 'C:Bolt'], ['A:Acme', 'C:Bolt']]);
      assert.equal(single.seen.meta, null);
    });

    test('only a record-source writer is given the records the database builds', async () => {
      const general = probeWriter('general', { fields: 'columns', categories: false });
      const delimited: RecordSourceWriter & { seen: Seen } = { ...probeWriter('delimited', { fields: 'columns', categories: false }), takesRecordSource: true };
      const exports = createExportService({ db: testDb.db, writers: { formats: { general, delimited }, summary: general } });
      await drain(exports.open(await exports.resolve(await subject(), request({ format: 'general' }))));
      await drain(exports.open(await exports.resolve(await subject(), request({ format: 'delimited' }))));
      assert.equal(general.seen.records, undefined);
      assert.equal(typeof delimited.seen.records, 'function');
    });

    test('another store\u2019s profile id misses in the database exactly like an unknown id: one look-up by (store, id), no row read', async () => {
      await storeWithKey(testDb.db, 'svc-other');
      const foreign = await putProfile(testDb.db, 'svc-other', { name: 'theirs', columns: [{ field: 'offer_id', title: 'SKU' }] });
      const lookups: { args: unknown[]; found: boolean }[] = [];
      const profiles = new Proxy(testDb.db.profiles, {
        get(target, name) {
          const value = Reflect.get(target, name, target);
          if (name !== 'get') return typeof value === 'function' ? value.bind(target) : value;
          return async (...args: unknown[]) => {
            const row = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            lookups.push({ args, found: row !== null });
            return row;
          };
        },
      });
      const db = Object.assign(Object.create(Object.getPrototypeOf(testDb.db)), testDb.db, { profiles }) as Database;
      const writer = probeWriter('probe', { fields: 'columns', categories: false });
      const exports = createExportService({ db, writers: { formats: { probe: writer }, summary: writer } });
      await assert.rejects(exports.resolve(await subject(), request({ profileId: foreign.id })), { code: 'profile_not_found' });
      await assert.rejects(exports.resolve(await subject(), request({ profileId: foreign.id + 1_000_000 })), { code: 'profile_not_found' });
      assert.deepEqual(lookups, [
        { args: ['svc-shop', foreign.id], found: false },
        { args: ['svc-shop', foreign.id + 1_000_000], found: false },
      ]);
    });

    test('the profile is checked before the price list (CONTRACT §3), and a list is required', async () => {
      const writer = probeWriter('probe', { fields: 'columns', categories: false });
      const exports = createExportService({ db: testDb.db, writers: { formats: { probe: writer }, summary: writer } });
      const noList = { store: (await subject()).store, list: null };
      await assert.rejects(exports.resolve(noList, request({ profileId: 999_999 })), { code: 'profile_not_found' });
      await assert.rejects(exports.resolve(noList, request()), { code: 'price_list_not_found' });
    });
  });
}
