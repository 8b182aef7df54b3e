/**
 * The YML offers a store builds itself (renderRecords with a YmlRecordSpec) against the YML
 * writer's own JavaScript layout: the same bytes for any items, categories and profiles, on
 * every dialect this run reaches. The writer's JavaScript path is the reference (its output is
 * checked against Yandex's shops.dtd by formats/yml.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { TestDatabase } from '../../test/support/dialects.js';
import { profileColumns } from '../model/columns.js';
import type { ExportMeta } from '../model/export-writer.js';
import type { PriceItem } from '../model/price-item.js';
import type { ProfileColumn } from '../model/profile.js';
import { ymlRecordSpec, ymlWriter } from '../formats/yml.js';
import { loneCharacterTexts, builtRecords, itemsAcrossPages, bytesOf, createRunDatabase, legacySampleBothWays, RECORDS_RUNS, storedQuoteFree } from '../../test/support/built-records.js';
import { buildMeta, inBatches, plainItem } from '../../test/support/format-items.js';
import type { Database } from './types.js';

// Texts heavy with what YML escaping is about: the references, `"`, CR, tab and LF (kept in text,
// references in an attribute), every character XML 1.0 cannot carry that a store can hold (not
// NUL: PostgreSQL refuses it; no lone surrogate: no UTF-8 form; the domain refuses both,
// model/text.ts), U+2028/2029, Cyrillic, emoji, and what a JSON path or a JSON escape means
// (`.`, `[`, `$`, `\`, `/`), since the store reads most offer fields out of `extra` JSON.
const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1));
const char = fc.constantFrom(
  '&', '<', '>', ']', '"', "'", '\\', '/', ' ', '.', '[', '$', 'a', 'Я', 'ё', '😀', '\u2028', '\u2029', '\uFFFE', '\uFFFF', '\uFFFD', '\u007f', ';', '#', ...controls,
);
const text = fc.string({ unit: char, maxLength: 12 });
const money = fc.oneof(
  fc.integer({ min: 0, max: 10_000_000_000 }),
  fc.constantFrom(0, 1, 5, 10, 99, 100, 101, 199050, Number.MAX_SAFE_INTEGER - 1, Number.MAX_SAFE_INTEGER),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
);
// Integer-like keys too: a JavaScript object lists them first, whatever the order they came in.
const attributeKey = fc.oneof(text, fc.constantFrom('1', '2', '10', '01', '-1', '4294967295', 'color', '__proto__', 'constructor'));
const category = fc.oneof(fc.constant(null), fc.constantFrom('A', 'A / B', 'A / B / C', 'Одежда / Обувь'), fc.array(text, { minLength: 1, maxLength: 3 }).map((levels) => levels.join(' / ')));
const itemArb = fc.record({
  offer: text,
  name: text,
  price: money,
  old_price: fc.option(money),
  purchase_price: fc.option(money),
  // Sometimes equal to price: oldprice appears only when greater.
  oldIsPrice: fc.boolean(),
  currency: fc.constantFrom('RUB', 'USD', 'RUR', '<&>', 'rub'),
  available: fc.boolean(),
  quantity: fc.option(fc.integer({ min: -5, max: Number.MAX_SAFE_INTEGER })),
  url: fc.option(text),
  picture: fc.option(text),
  vendor: fc.option(text),
  vendor_code: fc.option(text),
  description: fc.option(text),
  barcode: fc.option(text),
  category,
  attributes: fc.option(fc.dictionary(attributeKey, text, { maxKeys: 4 })),
});

type RawItem = typeof itemArb extends fc.Arbitrary<infer T> ? T : never;

const toItems = (raw: RawItem[]): PriceItem[] =>
  raw.map(({ offer, oldIsPrice, attributes, ...r }, i) =>
    plainItem({
      ...r,
      offer_id: `${i}${offer}`,
      old_price: oldIsPrice ? r.price : r.old_price,
      attributes: attributes === null || Object.keys(attributes).length === 0 ? null : attributes,
    }),
  );

const ELEMENT_FIELDS = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url', 'picture', 'vendor', 'vendor_code', 'description', 'barcode', 'category', 'purchase_price'];
const columnArb = fc.oneof(
  fc.record({ field: fc.constantFrom(...ELEMENT_FIELDS), title: text }).map(({ field, title }): ProfileColumn => ({ field, title })),
  fc.record({ key: attributeKey, title: text }).map(({ key, title }): ProfileColumn => ({ field: `attributes.${key}`, title })),
  fc.record({ value: text, title: text }).map(({ value, title }): ProfileColumn => ({ value, title })),
);

for (const run of RECORDS_RUNS) {
  const { dialect, name } = run;
  let testDb: TestDatabase;
  let db: Database;
  const { bothWays: viaWriter } = builtRecords(() => db);
  const bothWays = (items: readonly PriceItem[], meta: ExportMeta, onlyAvailable = false, afterPublish?: (listId: number) => void | Promise<void>) =>
    viaWriter(ymlWriter, items, meta, onlyAvailable, afterPublish);

  /** Rows as an older store left them, `quote_free` NULL; they take the scan. */
  const storedBefore = storedQuoteFree(() => testDb, 'NULL');

  describe(`YML offers built by the database (${name})`, () => {
    before(async () => {
      testDb = await createRunDatabase(run);
      db = testDb.db;
    });
    after(async () => testDb.drop());

    it('the legacy sample gives the JavaScript bytes, filtered too', () => legacySampleBothWays(bothWays));

    it('an empty list gives the JavaScript bytes', async () => {
      const none = await bothWays([], buildMeta([]));
      assert.equal(none.used, true);
      assert.deepEqual(none.viaStore, none.viaJavaScript);
    });

    it('equal the JavaScript layout for any items, categories and profiles', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(itemArb, { maxLength: 25 }),
          fc.option(fc.array(columnArb, { maxLength: 8 })),
          fc.boolean(),
          // Some items' categories left out of the meta: they go under the default category.
          fc.boolean(),
          fc.boolean(),
          async (raw, columns, onlyAvailable, someUndeclared, storedByOlder) => {
            const items = toItems(raw);
            const meta = buildMeta(items, columns === null ? {} : { columns: profileColumns(columns) });
            if (someUndeclared) meta.categories = meta.categories.filter((c, i) => c.path === '' || i % 2 === 0);
            const { viaStore, viaJavaScript, used } = await bothWays(items, meta, onlyAvailable, storedByOlder ? storedBefore : undefined);
            assert.equal(used, true);
            assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
            assert.deepEqual(viaStore, viaJavaScript);
          },
        ),
        { numRuns: 200 },
      );
    });

    it('escape a character wherever it falls among plain bytes, in texts and attribute values', async () => {
      const texts = loneCharacterTexts(['&', '<', '>', '"', '\r', '\t', '\n', '\u0001', '\u001f', '\uFFFE', '\uFFFF']);
      const items = texts.map((text, i) => plainItem({ offer_id: `L-${i}-${text}`, name: text, vendor: text, attributes: { [text]: text } }));
      const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items));
      assert.equal(used, true);
      assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
    });

    it('crosses pages in order (more items than one page)', async () => {
      const items = Array.from({ length: itemsAcrossPages(dialect) }, (_, i) =>
        plainItem({
          offer_id: `P-${i}`,
          name: i % 3 ? `n ${i}` : `<&>\r${i}`,
          price: i,
          old_price: i % 5 === 0 ? i + 1 : null,
          available: i % 4 !== 0,
          category: i % 7 === 0 ? null : `C ${i % 11} / D ${i % 3}`,
          vendor: i % 2 ? 'Acme & Co' : null,
          attributes: i % 6 === 0 ? { color: `c${i}`, '1': '"one"' } : null,
        }),
      );
      for (const onlyAvailable of [false, true]) {
        const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items), onlyAvailable);
        assert.equal(used, true);
        assert.deepEqual(viaStore, viaJavaScript);
      }
    });

    it('attributes that need no escaping, in an extra without a backslash, give the JavaScript bytes', async () => {
      // JSON's own punctuation inside the texts, integer-like keys (listed first), Cyrillic, an empty object.
      const attributes: Record<string, string>[] = [
        { b: 'a{', '2': '}x', a: ':', '10': 'a,b', 'цвет': 'чёрный' },
        { 'k:': ',', ',k': '{}', '}': '[1]', 'x y': ' ' },
        { only: '' },
        {},
      ];
      const items = attributes.map((attrs, i) => plainItem({ offer_id: `A-${i}`, vendor: i % 2 ? 'V' : null, category: 'A', attributes: attrs }));
      const columns = profileColumns([{ field: 'offer_id', title: 'id' }, { field: 'attributes.a', title: 'a' }, { field: 'attributes.,k', title: 'k' }]);
      for (const meta of [buildMeta(items), buildMeta(items, { columns })]) {
        const { viaStore, viaJavaScript, used } = await bothWays(items, meta);
        assert.equal(used, true);
        assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
      }
    });

    it('a profile of 130 columns (past the function argument limits) gives the same bytes', async () => {
      const columns: ProfileColumn[] = Array.from({ length: 130 }, (_, i) =>
        i % 3 === 0 ? { value: `c${i}`, title: `c ${i}` } : i % 3 === 1 ? { field: 'purchase_price', title: `p ${i}` } : { field: `attributes.k${i % 4}`, title: `a ${i}` },
      );
      const items = [
        plainItem({ offer_id: 'W-1', name: 'a & "b"', purchase_price: 5, attributes: { k1: 'x', k2: '' } }),
        plainItem({ offer_id: 'W-2', url: 'u', category: 'A' }),
      ];
      const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items, { columns: profileColumns(columns) }));
      assert.equal(used, true);
      assert.deepEqual(viaStore, viaJavaScript);
    });

    it('falls back to JavaScript for a meta without the default category, which the layout refuses', async () => {
      const items = [plainItem({ offer_id: 'F-1', category: 'A' }), plainItem({ offer_id: 'F-2', category: 'B' })];
      const meta = buildMeta(items);
      meta.categories = meta.categories.filter((c) => c.path !== '');
      assert.equal(ymlRecordSpec(meta), null);
      let asked = false;
      const reader = () => {
        asked = true;
        return null;
      };
      const viaFallback = await bytesOf(ymlWriter.render(inBatches(items), meta, reader));
      assert.equal(asked, false);
      assert.deepEqual(viaFallback, await bytesOf(ymlWriter.render(inBatches(items), meta)));
      assert.ok(viaFallback.includes('<offer id="F-2"'));
      // An offer whose category is declared nowhere is still the JavaScript layout's error.
      meta.categories = meta.categories.filter((c) => c.path !== 'B');
      await assert.rejects(bytesOf(ymlWriter.render(inBatches(items), meta, () => null)), /category "B" is not among meta.categories/);
    });
  });
}
