/**
 * The changes answer (CONTRACT §11) from records the store builds next to the recorded changes
 * (ChangesRepository.records: sqlite/change-records.ts, postgres/items.ts) against the same answer printed by the
 * writer from the items (domain/changes.ts changeEntries): the same bytes for any two
 * consecutive versions, columns and filter, on every dialect this run reaches. The
 * JavaScript path is the reference; a store that builds none answers by it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createExportService } from '../domain/exports.js';
import type { SourceRow } from '../domain/publication-source.js';
import { putProfile } from '../domain/profiles.js';
import { publishPriceList } from '../domain/publishing.js';
import { jsonChangesWriter } from '../formats/changes/json.js';
import { EXPORT_WRITERS } from '../formats/registry.js';
import type { ProfileColumn } from '../model/profile.js';
import { bytesOf, createRunDatabase, RECORDS_RUNS } from '../../test/support/built-records.js';
import type { TestDatabase } from '../../test/support/dialects.js';
import { CHANGE_RECORDS_PER_PAGE } from './sql/change-rows.js';
import type { ChangesRepository, Database } from './types.js';

/** An item as a repricer sends it; `description` is kept in `extra`, and only a profile's column prints it. */
interface Raw {
  offer_id: string;
  name: string;
  price: number;
  old_price: number | null;
  currency: string;
  available: boolean;
  quantity: number | null;
  url: string | null;
  description: string | null;
}

const rawRow = (item: Raw): Record<string, unknown> => {
  const row: Record<string, unknown> = { offer_id: item.offer_id, name: item.name, price: (item.price / 100).toFixed(2), currency: item.currency, available: item.available };
  if (item.old_price !== null) row.old_price = (item.old_price / 100).toFixed(2);
  if (item.quantity !== null) row.quantity = item.quantity;
  if (item.url !== null) row.url = item.url;
  if (item.description !== null) row.description = item.description;
  return row;
};

async function* source(items: readonly Raw[]): AsyncGenerator<SourceRow> {
  for (const [i, item] of items.entries()) yield { position: `item ${i}`, raw: rawRow(item), text: false };
}

const STEADY: Omit<Raw, 'offer_id'> = { name: 'S', price: 100, old_price: null, currency: 'RUB', available: true, quantity: null, url: null, description: null };

for (const run of RECORDS_RUNS) {
  describe(`changes answers built by the database (${run.name})`, () => {
    let testDb: TestDatabase;
    let built = 0;
    let storeCount = 0;

    /** The database, telling each time it built an answer's records. */
    const counted = (db: Database): Database => {
      const changes: ChangesRepository = {
        span: (...args) => db.changes.span(...args),
        candidates: (...args) => db.changes.candidates(...args),
        records(...args) {
          const records = db.changes.records(...args);
          if (records !== null) built++;
          return records;
        },
      };
      return new Proxy(db, { get: (target, name) => (name === 'changes' ? changes : Reflect.get(target, name)) });
    };

    before(async () => {
      testDb = await createRunDatabase(run);
    });
    after(async () => testDb.drop());

    /** Publishes `lists` one after another to a new store (the guard forced); its id. */
    async function publishAll(lists: readonly (readonly Raw[])[], columns: ProfileColumn[] | null): Promise<{ storeId: string; profileId: number | null }> {
      const db = testDb.db;
      const storeId = `changes-${++storeCount}`;
      await db.stores.create({ id: storeId, name: storeId, currency: 'RUB', url: null, company: null });
      const profileId = columns === null ? null : (await putProfile(db, storeId, { name: 'p', columns })).id;
      for (const items of lists) await publishPriceList(db, storeId, source(items), { force: true });
      return { storeId, profileId };
    }

    /** The changes answer since `since`, by the store's records and by the writer's layout. */
    async function bothWays(storeId: string, since: number, profileId: number | null, onlyAvailable: boolean) {
      const db = testDb.db;
      const viaStore = createExportService({ db: counted(db), writers: EXPORT_WRITERS });
      const viaJavaScript = createExportService({
        db,
        writers: { ...EXPORT_WRITERS, changes: { ...EXPORT_WRITERS.changes, json: { ...jsonChangesWriter, built: undefined } } },
      });
      const subject = { store: (await db.stores.get(storeId))!, list: await db.priceLists.latest(storeId) };
      const request = { format: 'json', onlyAvailable, profileId, since };
      const builtBefore = built;
      const storeBytes = await bytesOf(viaStore.open(await viaStore.resolveChanges(subject, request)));
      const used = built > builtBefore;
      const javaScriptBytes = await bytesOf(viaJavaScript.open(await viaJavaScript.resolveChanges(subject, request)));
      return { viaStore: storeBytes.toString('utf8'), viaJavaScript: javaScriptBytes.toString('utf8'), used };
    }

    /** Whether this run's store builds the records (with its C extension or module). */
    const builds = run.nativeRecords === true;

    it('equal the JavaScript answer for any two versions, columns and filter', async () => {
      // Texts heavy with what JSON escaping is about (the domain refuses other control characters).
      const char = fc.constantFrom('"', '\\', '/', "'", ' ', 'a', 'b', 'Я', '€', '😀', '\u2028', '\t', '\n', '<', '&');
      const text = fc.string({ unit: char, minLength: 1, maxLength: 6 }).filter((t) => t.trim() !== '');
      const money = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(0, 1, 100, 199050));
      const itemArb = fc.record({
        name: text,
        price: money,
        old_price: fc.option(money),
        currency: fc.constantFrom('RUB', 'USD'),
        available: fc.boolean(),
        quantity: fc.option(fc.integer({ min: 0, max: 1000 })),
        url: fc.option(fc.constantFrom('https://shop.example/a', 'https://shop.example/%22b%22', 'http://shop.example/Я')),
        description: fc.option(text),
      });
      // Offer ids from a small pool, so that the two versions share, drop and add offers.
      const list = fc.uniqueArray(fc.record({ id: fc.integer({ min: 0, max: 40 }), item: itemArb }), { selector: (entry) => entry.id, maxLength: 25 });
      // A change of one field only, so that "changed" turns on each field in turn (a field the columns do not show is no change).
      const fields = ['name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url', 'description'] as const;
      const edit = fc.record({ field: fc.constantFrom(...fields), item: itemArb });
      const columnArb = fc.constantFrom<ProfileColumn>(
        { field: 'offer_id', title: 'id' },
        { field: 'name', title: 'n' },
        { field: 'old_price', title: 'o' },
        { field: 'available', title: 'a' },
        { field: 'quantity', title: 'q' },
        { field: 'url', title: 'u' },
        { field: 'currency', title: 'c' },
        { field: 'price', title: 'p' },
        { value: 'const "x"', title: 'k' },
        // A field the store keeps in no column: the writer's layout answers.
        { field: 'description', title: 'd' },
      );
      await fc.assert(
        fc.asyncProperty(list, fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), edit), { maxLength: 20 }), fc.option(fc.uniqueArray(columnArb, { minLength: 1, selector: (c) => c.title })), fc.boolean(), async (first, edits, columns, onlyAvailable) => {
          const ids = (id: number) => `${id % 3 === 0 ? 'Я-' : ''}${id}${id % 5 === 0 ? '"' : ''}`;
          // An offer the same in both, so that neither list is empty (a publication of none is refused).
          const base = new Map([[-1, { ...first[0]?.item ?? STEADY, offer_id: 'steady' }], ...first.map(({ id, item }): [number, Raw] => [id, { ...item, offer_id: ids(id) }])]);
          const next = new Map(base);
          for (const [id, { field, item }] of edits) {
            const was = next.get(id);
            // An edit of an absent offer adds it; of a present one, changes one field, or removes it (a price of 0 stands for removal).
            if (was === undefined) next.set(id, { ...item, offer_id: ids(id) });
            else if (item.price === 0) next.delete(id);
            else next.set(id, { ...was, [field]: item[field] });
          }
          const { storeId, profileId } = await publishAll([[...base.values()], [...next.values()]], columns);
          const { viaStore, viaJavaScript, used } = await bothWays(storeId, 1, profileId, onlyAvailable);
          assert.equal(viaStore, viaJavaScript);
          assert.equal(used, builds && !columns?.some((column) => column.field === 'description'));
        }),
        { numRuns: 60 },
      );
    });

    it('crosses pages in offer_id order: a wiped list, a list of new offers, both filters', async () => {
      const count = CHANGE_RECORDS_PER_PAGE * 2 + 345;
      const item = (i: number, price: number): Raw => ({ offer_id: `P-${String(i).padStart(5, '0')}`, name: i % 3 ? `n ${i}` : `"q"\n${i}`, price, old_price: null, currency: 'RUB', available: i % 4 !== 0, quantity: null, url: null, description: null });
      const all = Array.from({ length: count }, (_, i) => item(i, 100 + i));
      // Version 2 changes every other price and drops a third; version 3 keeps one offer.
      const second = all.filter((_, i) => i % 3 !== 1).map((it, i) => (i % 2 ? { ...it, price: it.price + 1 } : it));
      const { storeId } = await publishAll([all, second, [item(7, 1)]], null);
      for (const since of [1, 2]) {
        for (const onlyAvailable of [false, true]) {
          const { viaStore, viaJavaScript, used } = await bothWays(storeId, since, null, onlyAvailable);
          assert.equal(viaStore, viaJavaScript, `since ${since}, only available: ${onlyAvailable}`);
          // Since version 1 spans two versions: the JavaScript path reads both rows by offer_id.
          assert.equal(used, builds && since === 2);
        }
      }
    });

    it('an answer with nothing changed, nothing removed, or neither, gives the JavaScript bytes', async () => {
      const a: Raw = { offer_id: 'A', name: 'A', price: 100, old_price: null, currency: 'RUB', available: true, quantity: null, url: null, description: null };
      const b: Raw = { ...a, offer_id: 'B' };
      const cases: [string, Raw[][], unknown][] = [
        ['a change no column shows', [[a], [{ ...a, description: 'not shown' }]], { changed: [], removed: [] }],
        ['an offer added', [[a], [a, b]], { changed: ['B'], removed: [] }],
        ['an offer removed', [[a, b], [a]], { changed: [], removed: ['B'] }],
      ];
      for (const [name, lists, expected] of cases) {
        const { storeId } = await publishAll(lists, null);
        const { viaStore, viaJavaScript, used } = await bothWays(storeId, 1, null, false);
        assert.equal(viaStore, viaJavaScript, name);
        assert.equal(used, builds, name);
        const answer = JSON.parse(viaStore) as { changed: { offer_id: string }[]; removed: string[] };
        assert.deepEqual({ changed: answer.changed.map((item) => item.offer_id), removed: answer.removed }, expected, name);
      }
    });
  });
}
