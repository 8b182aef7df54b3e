/**
 * The JSON items a store builds itself (renderRecords with a JsonRecordSpec) against the JSON
 * writer's own JavaScript layout: the same bytes for any items and columns, on every dialect
 * this run reaches. The writer's JavaScript path is the reference.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { executeRaw, type TestDatabase } from '../../test/support/dialects.js';
import { openDatabase } from './factory.js';
import { profileColumns } from '../model/columns.js';
import type { ExportMeta } from '../model/export-writer.js';
import type { PriceItem } from '../model/price-item.js';
import type { ProfileColumn } from '../model/profile.js';
import { jsonRecordSpec, jsonWriter } from '../formats/json.js';
import { loneCharacterTexts, builtRecords, itemsAcrossPages, createRunDatabase, legacySampleBothWays, RECORDS_RUNS, storedQuoteFree } from '../../test/support/built-records.js';
import { buildMeta, plainItem } from '../../test/support/format-items.js';
import { EXACT_BELOW } from './sqlite/json-number-sql.js';
import type { Database } from './types.js';

/** The largest minor units a list holds (money.ts: a safe integer). */
const MAX_UNITS = Number.MAX_SAFE_INTEGER;

/**
 * Amounts where the printing rule changes: small ones, the exact rule's bound, the top of the
 * range, and ties where two cents read back as the same double (sqlite/json-number-sql.ts).
 */
function awkwardAmounts(): number[] {
  const amounts = [0, 1, 5, 10, 50, 99, 100, 101, 110, 199050, 123456789, 10 ** 15 - 1, 10 ** 15, EXACT_BELOW - 1, EXACT_BELOW, EXACT_BELOW + 1, MAX_UNITS - 1, MAX_UNITS];
  // A tie: cents a and a + 1 equally near the double m/64, where 100m = 64a + 32.
  for (let a = BigInt(EXACT_BELOW) + 7n, found = 0; found < 6; a += 1_000_003n) {
    if ((64n * a + 32n) % 100n !== 0n) continue;
    amounts.push(Number(a), Number(a) + 1);
    found++;
  }
  return amounts.filter((units) => units <= MAX_UNITS);
}

for (const run of RECORDS_RUNS) {
  const { dialect, name } = run;
  let testDb: TestDatabase;
  let db: Database;
  const { bothWays: viaWriter } = builtRecords(() => db);
  const bothWays = (items: readonly PriceItem[], meta: ExportMeta, onlyAvailable = false, afterPublish?: (listId: number) => Promise<void>) =>
    viaWriter(jsonWriter, items, meta, onlyAvailable, afterPublish);

  /** Rows as an older store left them, `quote_free` NULL or without its JSON bits (33 and up); they take to_json. */
  const storedBefore = (to: 'null' | 'no json bits') => storedQuoteFree(() => testDb, to === 'null' ? 'NULL' : 'quote_free % 8589934592');

  describe(`JSON items built by the database (${name})`, () => {
    before(async () => {
      testDb = await createRunDatabase(run);
      db = testDb.db;
    });
    after(async () => testDb.drop());

    it('the legacy sample gives the JavaScript bytes, filtered too', () =>
      legacySampleBothWays(bothWays, (viaStore) => JSON.parse(viaStore.toString('utf8'))));

    it('an empty list, and a list whose items the filter drops, give the JavaScript bytes', async () => {
      const none = await bothWays([], buildMeta([]));
      assert.deepEqual(none.viaStore, none.viaJavaScript);
      const unavailable = [plainItem({ offer_id: 'U-1', available: false })];
      const dropped = await bothWays(unavailable, buildMeta([]), true);
      assert.deepEqual(dropped.viaStore, dropped.viaJavaScript);
    });

    it('equal the JavaScript layout for any items and columns', async () => {
      // Texts heavy with what JSON escaping is about: quotes, backslashes, every control
      // character the store can hold (PostgreSQL refuses NUL; the domain refuses all but tab,
      // LF and CR), DEL, the line separators JSON.stringify leaves alone, Cyrillic, emoji. No
      // lone surrogate: it has no UTF-8 form, so no store can hold one, and the domain refuses
      // it before the store (model/text.ts).
      const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1));
      const char = fc.constantFrom('"', '\\', '/', "'", ' ', 'a', 'Я', 'ё', '€', '😀', '\u007f', '\u2028', '\u2029', '\uFEFF', '<', '&', ...controls);
      const text = fc.string({ unit: char, maxLength: 12 });
      const money = fc.oneof(fc.integer({ min: 0, max: 10_000_000_000 }), fc.constantFrom(...awkwardAmounts()), fc.integer({ min: EXACT_BELOW, max: MAX_UNITS }));
      const itemArb = fc.record({
        name: text,
        price: money,
        old_price: fc.option(money),
        currency: fc.constantFrom('RUB', 'USD', 'Я"\\'),
        available: fc.boolean(),
        quantity: fc.option(fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constant(MAX_UNITS))),
        url: fc.option(text),
        offer: text,
      });
      const columnArb = fc.oneof(
        fc.record({ field: fc.constantFrom('offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'), key: fc.option(text, { nil: undefined }) })
          .map(({ field, key }): ProfileColumn => ({ field, title: field, ...(key === undefined ? {} : { key }) })),
        fc.record({ value: text, key: text }).map(({ value, key }): ProfileColumn => ({ value, title: `const ${value}`, key })),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(itemArb, { maxLength: 30 }), fc.option(fc.array(columnArb, { maxLength: 8 })), fc.boolean(), fc.constantFrom('now', 'null', 'no json bits'), async (raw, columns, onlyAvailable, stored) => {
          const items = raw.map((r, i) => plainItem({ ...r, offer_id: `${i}${r.offer}` }));
          const meta = buildMeta(items, columns === null ? {} : { columns: profileColumns(columns) });
          const { viaStore, viaJavaScript, used } = await bothWays(items, meta, onlyAvailable, stored === 'now' ? undefined : storedBefore(stored));
          assert.equal(used, true);
          assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
          assert.deepEqual(viaStore, viaJavaScript);
        }),
        { numRuns: 200 },
      );
    });

    it('prints every awkward amount of money as String(units / 100)', async () => {
      const amounts = awkwardAmounts();
      for (let i = 0; i < 2000; i++) amounts.push(Math.floor(EXACT_BELOW + Math.random() * (MAX_UNITS - EXACT_BELOW)), Math.floor(Math.random() * EXACT_BELOW));
      const items = amounts.map((price, i) => plainItem({ offer_id: `M-${i}`, price, old_price: amounts[amounts.length - 1 - i] }));
      const { viaStore, viaJavaScript } = await bothWays(items, buildMeta(items));
      assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
    });

    if (dialect === 'postgres') {
      it("prints amounts as JavaScript does whatever the database's extra_float_digits", async () => {
        // The amounts are float8's shortest text, which needs extra_float_digits ≥ 1; the store pins it per connection.
        const name = new URL(testDb.url).pathname.slice(1);
        await executeRaw(testDb, `ALTER DATABASE ${name} SET extra_float_digits = 0`);
        const fresh = await openDatabase(testDb.url, { nativeRecords: run.nativeRecords });
        const kept = db;
        try {
          db = fresh;
          const amounts = awkwardAmounts();
          const items = amounts.map((price, i) => plainItem({ offer_id: `F-${i}`, price, old_price: amounts[amounts.length - 1 - i] }));
          const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items));
          assert.equal(used, true);
          assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
        } finally {
          db = kept;
          await fresh.close();
          await executeRaw(testDb, `ALTER DATABASE ${name} RESET extra_float_digits`);
        }
      });
    }

    it('escape a character wherever it falls among plain bytes', async () => {
      const texts = loneCharacterTexts(['"', '\\', '\r', '\t', '\n', '\u0001', '\u001f']);
      const items = texts.map((text, i) => plainItem({ offer_id: `L-${i}`, name: text, url: text }));
      const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items));
      assert.equal(used, true);
      assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
    });

    it('crosses pages in order (more items than one page)', async () => {
      const items = Array.from({ length: itemsAcrossPages(dialect) }, (_, i) => plainItem({ offer_id: `P-${i}`, name: i % 3 ? `n ${i}` : `"q"\n${i}`, price: i, available: i % 4 !== 0 }));
      for (const onlyAvailable of [false, true]) {
        const { viaStore, viaJavaScript } = await bothWays(items, buildMeta(items), onlyAvailable);
        assert.deepEqual(viaStore, viaJavaScript);
      }
    });

    it('a profile of 130 columns (past the function argument limits) gives the same bytes', async () => {
      const fields = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'];
      const columns: ProfileColumn[] = Array.from({ length: 130 }, (_, i) =>
        i % 5 === 4 ? { value: `c${i}`, title: `c${i}` } : { field: fields[i % fields.length], title: `f${i}`, key: `k${i}` },
      );
      const items = [plainItem({ offer_id: 'W-1', name: 'a, "b"', old_price: 5, quantity: 3 }), plainItem({ offer_id: 'W-2', url: 'u' })];
      const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items, { columns: profileColumns(columns) }));
      assert.equal(used, true);
      assert.deepEqual(viaStore, viaJavaScript);
    });

    it('is not used where only JavaScript can render: attributes, fields in no column', async () => {
      assert.equal(jsonRecordSpec(profileColumns([{ field: 'attributes.color', title: 'c' }])), null);
      const vendor = jsonRecordSpec(profileColumns([{ field: 'vendor', title: 'v' }]));
      assert.notEqual(vendor, null);
      // Which fields are columns is the store's to say: the writer describes them, the store declines.
      assert.equal(db.priceLists.renderRecords(0, vendor!, { onlyAvailable: false }), null);
      const items = [plainItem({ offer_id: 'V-1', vendor: 'Acme "A"' })];
      const { viaJavaScript, used } = await bothWays(items, buildMeta(items, { columns: profileColumns([{ field: 'vendor', title: 'v' }]) }));
      assert.equal(used, false);
      assert.ok(viaJavaScript.includes('"vendor":"Acme \\"A\\""'));
    });
  });
}
