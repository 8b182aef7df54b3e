/**
 * The records a store builds itself (renderRecords) against the CSV writer's own JavaScript
 * layout: the same bytes for any items, columns, delimiter and options, and the predecessor's
 * bytes for the legacy sample; on every dialect this run reaches. The writer's JavaScript path
 * is the reference.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { builtRecords, itemsAcrossPages, bytesOf, createRunDatabase, RECORDS_RUNS, storedQuoteFree } from '../../test/support/built-records.js';
import type { TestDatabase } from '../../test/support/dialects.js';
import { LEGACY_COLUMNS, profileColumns } from '../model/columns.js';
import type { RecordReader } from '../model/record-spec.js';
import type { PriceItem } from '../model/price-item.js';
import type { ProfileColumn, TabularOptions } from '../model/profile.js';
import { csvWriter, recordSpec, tsvWriter } from '../formats/delimited.js';
import { buildMeta, inBatches, legacySample, plainItem, readFixture } from '../../test/support/format-items.js';
import type { RecordSourceWriter } from '../model/export-writer.js';
import type { Database } from './types.js';

for (const run of RECORDS_RUNS) {
  const { name } = run;
  let testDb: TestDatabase;
  let db: Database;
  /** Publishes the items as a new store's latest list; returns the list id. */
  const { publish } = builtRecords(() => db);

  /** Rows published before the quote_free column existed hold NULL there and take the full test. */
  const forgetQuoteFree = storedQuoteFree(() => testDb, 'NULL');

  /** The writer's output through the store's records and through its JavaScript layout. */
  async function bothWays(writer: RecordSourceWriter, items: readonly PriceItem[], meta: ReturnType<typeof buildMeta>, onlyAvailable = false, publishedBeforeQuoteFree = false) {
    const listId = await publish(items);
    if (publishedBeforeQuoteFree) await forgetQuoteFree(listId);
    let used = false;
    const records: RecordReader = (spec) => {
      const built = db.priceLists.renderRecords(listId, spec, { onlyAvailable });
      used = built !== null;
      return built;
    };
    const kept = onlyAvailable ? items.filter((item) => item.available) : items;
    const viaStore = await bytesOf(writer.render(inBatches([]), meta, records));
    const viaJavaScript = await bytesOf(writer.render(inBatches(kept, 7), meta));
    return { viaStore, viaJavaScript, used };
  }

  describe(`records built by the database (${name})`, () => {
    before(async () => {
      testDb = await createRunDatabase(run);
      db = testDb.db;
    });
    after(async () => testDb.drop());

    it('the legacy sample gives the predecessor bytes, CSV and TSV, filtered too', async () => {
      const { items } = legacySample();
      for (const [writer, fixture, onlyAvailable] of [
        [csvWriter, 'legacy-sample.csv', false],
        [csvWriter, 'legacy-sample.only-available.csv', true],
        [tsvWriter, 'legacy-sample.tsv', false],
      ] as const) {
        const { viaStore, used } = await bothWays(writer, items, buildMeta(items), onlyAvailable);
        assert.equal(used, true, `${fixture}: the store's records were used`);
        assert.deepEqual(viaStore, readFixture(fixture), fixture);
      }
    });

    it('equal the JavaScript layout for any items, columns, delimiter and options', async () => {
      // Texts heavy with what quoting is about: delimiters, quotes, line ends, spaces at the ends,
      // characters that mean something in a GLOB class, non-ASCII and astral characters.
      const char = fc.constantFrom(',', ';', '"', '\r', '\n', ' ', '\t', '|', ']', '[', '^', '-', '*', '?', '\\', "'", 'a', 'Я', '€', '😀');
      const text = fc.string({ unit: char, maxLength: 12 });
      const money = fc.integer({ min: 0, max: 10_000_000_000 });
      const itemArb = fc.record({
        name: text,
        price: money,
        old_price: fc.option(money),
        currency: fc.constantFrom('RUB', 'USD'),
        available: fc.boolean(),
        quantity: fc.option(fc.integer({ min: 0, max: 1_000_000 })),
        url: fc.option(text),
        offer: text,
      });
      const columnArb = fc.oneof(
        fc.constantFrom('offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url').map((field): ProfileColumn => ({ field, title: field })),
        text.map((value): ProfileColumn => ({ value, title: `const ${value}` })),
      );
      const optionsArb = fc.record({
        delimiter: fc.constantFrom(',', ';', '\t', '|', ' ', ']', '^', '-', '*', 'é', '😀', "'"),
        decimal_separator: fc.constantFrom('.', ','),
        header: fc.boolean(),
        bom: fc.boolean(),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(itemArb, { maxLength: 30 }), fc.array(columnArb, { minLength: 1, maxLength: 8 }), optionsArb, fc.boolean(), fc.boolean(), async (raw, columns, options, onlyAvailable, old) => {
          fc.pre(options.delimiter !== options.decimal_separator);
          const items = raw.map((r, i) => plainItem({ ...r, offer_id: `${i}${r.offer}` }));
          const tabular: TabularOptions = { ...options, encoding: 'utf-8' } as TabularOptions;
          const meta = buildMeta(items, { columns: profileColumns(columns), tabular });
          const { viaStore, viaJavaScript, used } = await bothWays(csvWriter, items, meta, onlyAvailable, old);
          assert.equal(used, true);
          assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
          assert.deepEqual(viaStore, viaJavaScript);
        }),
        { numRuns: 200 },
      );
    });

    it('crosses pages in order (more items than one page)', async () => {
      const items = Array.from({ length: itemsAcrossPages(run.dialect) }, (_, i) => plainItem({ offer_id: `P-${i}`, name: i % 3 ? `n ${i}` : `"q", ${i}`, price: i, available: i % 4 !== 0 }));
      for (const onlyAvailable of [false, true]) {
        const { viaStore, viaJavaScript } = await bothWays(csvWriter, items, buildMeta(items), onlyAvailable);
        assert.deepEqual(viaStore, viaJavaScript);
      }
    });

    it('a profile of 130 columns (past the function argument limits) gives the same bytes', async () => {
      const fields = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'];
      const columns: ProfileColumn[] = Array.from({ length: 130 }, (_, i) =>
        i % 5 === 4 ? { value: `c${i}`, title: `c${i}` } : { field: fields[i % fields.length], title: `f${i}` },
      );
      const items = [plainItem({ offer_id: 'W-1', name: 'a, "b"', old_price: 5, quantity: 3 }), plainItem({ offer_id: 'W-2', url: 'u' })];
      const meta = buildMeta(items, { columns: profileColumns(columns) });
      const { viaStore, viaJavaScript, used } = await bothWays(csvWriter, items, meta);
      assert.equal(used, true);
      assert.deepEqual(viaStore, viaJavaScript);
    });

    it('is not used where only JavaScript can render: windows-1251, non-stored fields, a colliding separator', () => {
      const base: TabularOptions = { delimiter: ';', decimal_separator: ',', header: true, bom: false, encoding: 'utf-8' };
      assert.notEqual(recordSpec(LEGACY_COLUMNS, base), null);
      // Which fields are columns is the store's to say: the writer describes them, the store declines.
      assert.equal(db.priceLists.renderRecords(0, recordSpec(profileColumns([{ field: 'vendor', title: 'v' }]), base)!, { onlyAvailable: false }), null);
      assert.equal(recordSpec(profileColumns([{ field: 'attributes.color', title: 'c' }]), base), null);
      assert.equal(recordSpec(LEGACY_COLUMNS, { ...base, delimiter: ',', decimal_separator: ',' }), null);
    });

    it('the writer keeps windows-1251 on its JavaScript path', async () => {
      const items = [plainItem({ offer_id: 'W-1', name: 'Чайник' })];
      const tabular: TabularOptions = { delimiter: ';', decimal_separator: ',', header: true, bom: false, encoding: 'windows-1251' };
      const meta = buildMeta(items, { columns: LEGACY_COLUMNS, tabular });
      const { viaJavaScript, used } = await bothWays(csvWriter, items, meta);
      assert.equal(used, false);
      assert.ok(viaJavaScript.includes(Buffer.from([0xd7, 0xe0, 0xe9, 0xed, 0xe8, 0xea])), 'Чайник in windows-1251');
    });
  });
}
