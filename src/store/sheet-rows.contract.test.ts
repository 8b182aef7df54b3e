/**
 * The XLSX rows a store builds itself (renderRecords with a SheetRowSpec) against the XLSX
 * writer's own JavaScript rows: the same workbook, byte for byte, for any items and columns, on
 * every dialect this run reaches. The writer's JavaScript path is the reference.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createTestDatabase, DIALECTS, executeRaw, type TestDatabase } from '../../test/support/dialects.js';
import { profileColumns } from '../model/columns.js';
import type { ExportMeta } from '../model/export-writer.js';
import type { PriceItem } from '../model/price-item.js';
import type { ProfileColumn } from '../model/profile.js';
import { MAX_CELL_TEXT } from '../model/sheet-row.js';
import { xlsxWriter } from '../formats/xlsx/prices-writer.js';
import { builtRecords, itemsAcrossPages, bytesOf, storedQuoteFree } from '../../test/support/built-records.js';
import { buildMeta, inBatches, legacySample, plainItem } from '../../test/support/format-items.js';
import { unzip } from '../../test/support/workbooks.js';
import type { Database } from './types.js';

const SHEET = 'xl/worksheets/sheet1.xml';

/** The sheets equal, or a failure that shows where they part (not megabytes of both). */
function sameSheet(viaStore: Buffer, viaJavaScript: Buffer): void {
  const [ours, theirs] = [unzip(viaStore).get(SHEET)!, unzip(viaJavaScript).get(SHEET)!];
  if (ours === theirs) return;
  let at = 0;
  while (at < ours.length && ours[at] === theirs[at]) at++;
  assert.equal(ours.slice(Math.max(0, at - 200), at + 200), theirs.slice(Math.max(0, at - 200), at + 200), `the sheets part at character ${at}`);
}

for (const dialect of DIALECTS) {
  let testDb: TestDatabase;
  let db: Database;
  const built = builtRecords(() => db);
  /** Both ways, the sheets compared first (a readable difference), then every byte of the workbooks. */
  async function sameWorkbook(items: readonly PriceItem[], meta: ExportMeta, onlyAvailable = false, afterPublish?: (listId: number) => Promise<void>): Promise<void> {
    const { viaStore, viaJavaScript, used } = await built.bothWays(xlsxWriter, items, meta, onlyAvailable, afterPublish);
    assert.equal(used, true);
    sameSheet(viaStore, viaJavaScript);
    assert.ok(viaStore.equals(viaJavaScript), 'the workbooks differ');
  }

  describe(`XLSX rows built by the database (${dialect})`, () => {
    before(async () => {
      testDb = await createTestDatabase(dialect);
      db = testDb.db;
    });
    after(async () => testDb.drop());

    it('the legacy sample gives the JavaScript workbook, filtered too', async () => {
      const { items } = legacySample();
      for (const onlyAvailable of [false, true]) await sameWorkbook(items, buildMeta(items), onlyAvailable);
    });

    it('an empty list gives the JavaScript workbook', () => sameWorkbook([], buildMeta([])));

    it('equals the JavaScript rows for any items and columns, formulas escaped or not', async () => {
      // Texts heavy with what a cell's text is about: markup, CR, tab and LF, the characters XML
      // cannot carry, white space at either end, Excel's `_xHHHH_` escapes, formula starts, and
      // texts about as long as a cell holds. Rows as stored now and as an older store left them.
      const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1));
      const char = fc.constantFrom('&', '<', '>', '"', ' ', '=', '+', '-', '@', 'a', 'Я', '😀', '\uFFFE', '\uFFFF', '_x0041_', '_x00', '_', ...controls);
      const long = fc.tuple(fc.integer({ min: MAX_CELL_TEXT - 1, max: MAX_CELL_TEXT + 1 }), fc.constantFrom('a', ' ', '😀')).map(([length, end]) => 'b'.repeat(length - end.length) + end);
      const text = fc.oneof({ weight: 20, arbitrary: fc.string({ unit: char, maxLength: 8 }) }, long);
      const money = fc.oneof(fc.integer({ min: 0, max: 10_000_000_000 }), fc.constantFrom(0, 1, 5, 10, 99, 100, 101, 199050, Number.MAX_SAFE_INTEGER));
      const itemArb = fc.record({
        name: text,
        price: money,
        old_price: fc.option(money),
        currency: fc.constantFrom('RUB', 'USD', '<&>', '=1'),
        available: fc.boolean(),
        quantity: fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
        url: fc.option(text),
        offer: text,
      });
      const columnArb = fc.oneof(
        fc.constantFrom('offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url').map((field): ProfileColumn => ({ field, title: field })),
        fc.constantFrom('', '=SUM(A1)', ' 5 ', '<b>', '_x0041_').map((value): ProfileColumn => ({ value, title: `const ${value}` })),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(itemArb, { maxLength: 20 }),
          fc.option(fc.array(columnArb, { minLength: 1, maxLength: 8 })),
          fc.boolean(),
          fc.boolean(),
          fc.constantFrom('now', 'null'),
          async (raw, columns, onlyAvailable, escapeFormulas, stored) => {
            const items = raw.map((r, i) => plainItem({ ...r, offer_id: `${i}${r.offer}` }));
            const meta = buildMeta(items, columns === null ? {} : { columns: profileColumns(columns), tabular: { escape_formulas: escapeFormulas } });
            await sameWorkbook(items, meta, onlyAvailable, stored === 'now' ? undefined : storedQuoteFree(() => testDb, 'NULL'));
          },
        ),
        { numRuns: 120 },
      );
    });

    it('numbers rows across pages, whether every position holds a row or a filter leaves gaps', async () => {
      const items = Array.from({ length: itemsAcrossPages(dialect) }, (_, i) => plainItem({ offer_id: `P-${i}`, name: i % 3 ? `n ${i}` : `<&>\r${i}`, price: i, available: i % 4 !== 0 }));
      for (const onlyAvailable of [false, true]) await sameWorkbook(items, buildMeta(items), onlyAvailable);
    });

    it('a profile of 130 columns (past column Z and the function argument limits) gives the JavaScript workbook', async () => {
      const fields = ['offer_id', 'name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url'];
      const columns: ProfileColumn[] = Array.from({ length: 130 }, (_, i) =>
        i % 5 === 4 ? { value: `c${i}`, title: `c${i}` } : { field: fields[i % fields.length], title: `f${i}` },
      );
      const items = [plainItem({ offer_id: 'W-1', name: 'a & "b"', old_price: 5, quantity: 3 }), plainItem({ offer_id: 'W-2', url: ' u' })];
      await sameWorkbook(items, buildMeta(items, { columns: profileColumns(columns) }));
    });

    it('numbers rows after positions that hold none (items held back from a version)', async () => {
      const items = Array.from({ length: 7_000 }, (_, i) => plainItem({ offer_id: `G-${i}`, name: `n ${i}`, price: i }));
      const listId = await built.publish(items);
      // Positions 2,000–2,099 and every 7th one from 5,000 on hold no row, as quarantine leaves a version.
      const gone = (seq: number) => (seq >= 2_000 && seq < 2_100) || (seq >= 5_000 && seq % 7 === 0);
      await executeRaw(testDb, 'DELETE FROM price_items WHERE price_list_id = $1 AND ((seq >= 2000 AND seq < 2100) OR (seq >= 5000 AND seq % 7 = 0))', [listId]);
      const kept = items.filter((_, seq) => !gone(seq));
      const meta = buildMeta(kept);
      const records = db.priceLists.renderRecords.bind(db.priceLists);
      const viaStore = await bytesOf(xlsxWriter.render(inBatches([]), meta, (spec) => records(listId, spec, { onlyAvailable: false })));
      const viaJavaScript = await bytesOf(xlsxWriter.render(inBatches(kept, 7), meta));
      sameSheet(viaStore, viaJavaScript);
      assert.ok(viaStore.equals(viaJavaScript), 'the workbooks differ');
    });
  });
}
