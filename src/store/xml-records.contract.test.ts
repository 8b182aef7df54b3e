/**
 * The XML items a store builds itself (renderRecords with an XmlRecordSpec) against the XML
 * writer's own JavaScript layout: the same bytes for any items and columns, on every dialect
 * this run reaches. The writer's JavaScript path is the reference.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { TestDatabase } from '../../test/support/dialects.js';
import { profileColumns } from '../model/columns.js';
import type { ExportMeta } from '../model/export-writer.js';
import type { PriceItem } from '../model/price-item.js';
import type { ProfileColumn } from '../model/profile.js';
import { xmlRecordSpec, xmlWriter } from '../formats/xml.js';
import { loneCharacterTexts, builtRecords, itemsAcrossPages, createRunDatabase, legacySampleBothWays, RECORDS_RUNS, storedQuoteFree } from '../../test/support/built-records.js';
import { buildMeta, plainItem } from '../../test/support/format-items.js';
import type { Database } from './types.js';

for (const run of RECORDS_RUNS) {
  const { name } = run;
  let testDb: TestDatabase;
  let db: Database;
  const { bothWays: viaWriter } = builtRecords(() => db);
  const bothWays = (items: readonly PriceItem[], meta: ExportMeta, onlyAvailable = false, afterPublish?: (listId: number) => void) =>
    viaWriter(xmlWriter, items, meta, onlyAvailable, afterPublish);

  /** Rows as an older store left them, `quote_free` NULL or with its CSV bits alone; they take the scan. */
  const storedBefore = (to: 'null' | 'csv bits only') => storedQuoteFree(() => testDb, to === 'null' ? 'NULL' : 'quote_free & 65535');

  describe(`XML items built by the database (${name})`, () => {
    before(async () => {
      testDb = await createRunDatabase(run);
      db = testDb.db;
    });
    after(async () => testDb.drop());

    it('the legacy sample gives the JavaScript bytes, filtered too', () => legacySampleBothWays(bothWays));

    it('an empty list gives the JavaScript bytes', async () => {
      const none = await bothWays([], buildMeta([]));
      assert.deepEqual(none.viaStore, none.viaJavaScript);
    });

    it('equal the JavaScript layout for any items and columns', async () => {
      // Texts heavy with what XML escaping is about: the references, CR, tab and LF kept, every
      // character XML 1.0 cannot carry that a store can hold (not NUL: PostgreSQL refuses it;
      // no lone surrogate: no UTF-8 form, and the domain refuses it, model/text.ts), and
      // Cyrillic, emoji, quotes. Rows as stored now and as an older store left them.
      const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1));
      const char = fc.constantFrom('&', '<', '>', ']', '"', "'", '\\', ' ', 'a', 'Я', 'ё', '😀', '\uFFFE', '\uFFFF', '\uFFFD', '\u007f', ';', '#', ...controls);
      const text = fc.string({ unit: char, maxLength: 12 });
      const money = fc.oneof(fc.integer({ min: 0, max: 10_000_000_000 }), fc.constantFrom(0, 1, 5, 10, 99, 100, 101, 199050, Number.MAX_SAFE_INTEGER), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
      const itemArb = fc.record({
        name: text,
        price: money,
        old_price: fc.option(money),
        currency: fc.constantFrom('RUB', 'USD', '<&>'),
        available: fc.boolean(),
        quantity: fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
        url: fc.option(text),
        offer: text,
      });
      const columnArb = fc.oneof(
        fc.record({ field: fc.constantFrom('offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'), key: fc.option(text, { nil: undefined }) })
          .map(({ field, key }): ProfileColumn => ({ field, title: field, ...(key === undefined ? {} : { key }) })),
        fc.record({ value: text, key: text }).map(({ value, key }): ProfileColumn => ({ value, title: `const ${value}`, key })),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(itemArb, { maxLength: 30 }), fc.option(fc.array(columnArb, { maxLength: 8 })), fc.boolean(), fc.constantFrom('now', 'null', 'csv bits only'), async (raw, columns, onlyAvailable, stored) => {
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

    it('escape a character wherever it falls among plain bytes', async () => {
      const texts = loneCharacterTexts(['&', '<', '>', '"', '\r', '\t', '\n', '\u0001', '\u001f', '\uFFFE', '\uFFFF']);
      const items = texts.map((text, i) => plainItem({ offer_id: `L-${i}`, name: text, url: text }));
      const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items));
      assert.equal(used, true);
      assert.equal(viaStore.toString('utf8'), viaJavaScript.toString('utf8'));
    });

    it('crosses pages in order (more items than one page)', async () => {
      const items = Array.from({ length: itemsAcrossPages(run.dialect) }, (_, i) => plainItem({ offer_id: `P-${i}`, name: i % 3 ? `n ${i}` : `<&>\r${i}`, price: i, available: i % 4 !== 0 }));
      for (const onlyAvailable of [false, true]) {
        const { viaStore, viaJavaScript } = await bothWays(items, buildMeta(items), onlyAvailable);
        assert.deepEqual(viaStore, viaJavaScript);
      }
    });

    it('a profile of 130 columns (past the function argument limits) gives the same bytes', async () => {
      const fields = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'];
      const columns: ProfileColumn[] = Array.from({ length: 130 }, (_, i) =>
        i % 5 === 4 ? { value: `c${i}`, title: `c${i}` } : { field: fields[i % fields.length], title: `f${i}`, key: `k ${i}` },
      );
      const items = [plainItem({ offer_id: 'W-1', name: 'a & "b"', old_price: 5, quantity: 3 }), plainItem({ offer_id: 'W-2', url: 'u' })];
      const { viaStore, viaJavaScript, used } = await bothWays(items, buildMeta(items, { columns: profileColumns(columns) }));
      assert.equal(used, true);
      assert.deepEqual(viaStore, viaJavaScript);
    });

    it('is not used where only JavaScript can render: attributes, fields in no column', async () => {
      assert.equal(xmlRecordSpec(profileColumns([{ field: 'attributes.color', title: 'c' }])), null);
      const vendor = xmlRecordSpec(profileColumns([{ field: 'vendor', title: 'v' }]));
      assert.notEqual(vendor, null);
      // Which fields are columns is the store's to say: the writer describes them, the store declines.
      assert.equal(db.priceLists.renderRecords(0, vendor!, { onlyAvailable: false }), null);
      const items = [plainItem({ offer_id: 'V-1', vendor: 'Acme & <A>' })];
      const { viaJavaScript, used } = await bothWays(items, buildMeta(items, { columns: profileColumns([{ field: 'vendor', title: 'v' }]) }));
      assert.equal(used, false);
      assert.ok(viaJavaScript.includes('<vendor>Acme &amp; &lt;A&gt;</vendor>'));
    });
  });
}
