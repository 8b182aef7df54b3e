import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import { putProfile } from '../../src/domain/profiles.js';
import { DIALECTS } from '../support/dialects.js';
import { createTestApp, findKeyLeaks, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

/**
 * Our price 100 everywhere but P3; competitors: alpha prices 3 products, beta 2, gamma 2, delta 1.
 * P1: alpha 90 (cheaper), beta 100 (equal), gamma 120 (dearer) → min 90, avg 103.33, max 120, rank 2, gap 11.11
 * P2: alpha 100 (equal), gamma 80 (cheaper, unavailable) → min 80, rank 2, gap 25.00
 * P3 (ours 50, out of stock): alpha 60, beta 55, delta 70 → rank 1, gap -9.09
 * P4: no competitors.
 */
const ITEMS = [
  { offer_id: 'P1', name: 'One', price: 100, vendor: 'V', category: 'A / B', competitors: [{ name: 'alpha', price: 90 }, { name: 'beta', price: 100 }, { name: 'gamma', price: 120 }] },
  { offer_id: 'P2', name: 'Two', price: 100, competitors: [{ name: 'alpha', price: 100 }, { name: 'gamma', price: 80, available: false }] },
  { offer_id: 'P3', name: 'Three', price: 50, old_price: 65, quantity: 0, competitors: [{ name: 'alpha', price: 60 }, { name: 'beta', price: 55 }, { name: 'delta', price: 70 }] },
  { offer_id: 'P4', name: 'Four', price: 10 },
];

async function workbook(body: Buffer): Promise<ExcelJS.Workbook> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(body as unknown as ExcelJS.Buffer);
  return book;
}

const rowValues = (sheet: ExcelJS.Worksheet, n: number) => (sheet.getRow(n).values as unknown[]).slice(1);
const fill = (cell: ExcelJS.Cell) => ((cell.fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb ?? '').slice(-6).toUpperCase();

for (const dialect of DIALECTS) {
  describe(`the summary matrix over HTTP (${dialect})`, () => {
    let t: TestApp;
    let key: string;
    let plainKey: string;
    let profileId: number;
    before(async () => {
      t = await createTestApp(dialect);
      key = await storeWithKey(t.db, 'matrix-shop');
      plainKey = await storeWithKey(t.db, 'plain-shop');
      await publishJson(t.db, 'matrix-shop', ITEMS);
      await publishJson(t.db, 'plain-shop', [{ offer_id: 'X', name: 'No rivals', price: 5 }]);
      profileId = (await putProfile(t.db, 'matrix-shop', { name: 'p', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Our' }] })).id;
    });
    after(async () => {
      await t.close();
      assert.deepEqual(findKeyLeaks(), []);
    });

    test('Matrix: competitor columns by products priced then name, prices, min/avg/max, rank, gap, fills, panes, filter', async () => {
      const response = await get(t.app, `/WebApi/SummaryExportLatestGet/${key}`);
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
      assert.match(String(response.headers['content-disposition']), /filename="matrix-shop-summary-\d{8}T\d{6}Z\.xlsx"/);
      const book = await workbook(response.rawPayload);
      assert.deepEqual(book.worksheets.map((s) => s.name), ['Matrix', 'Offers', 'Summary']);
      const matrix = book.getWorksheet('Matrix')!;
      assert.deepEqual(rowValues(matrix, 1), ['offer_id', 'name', 'vendor', 'category', 'price', 'old_price', 'alpha', 'beta', 'gamma', 'delta', 'min', 'avg', 'max', 'rank', 'gap_to_min_%']);
      const p1 = rowValues(matrix, 2);
      assert.deepEqual(p1.slice(0, 2), ['P1', 'One']);
      assert.deepEqual(Array.from(p1.slice(4, 15), (v) => v ?? null), [100, null, 90, 100, 120, null, 90, 103.33, 120, 2, 11.11]);
      assert.deepEqual(rowValues(matrix, 3).slice(10, 15), [80, 90, 100, 2, 25]);
      assert.deepEqual(rowValues(matrix, 4).slice(10, 15), [55, 61.67, 70, 1, -9.09]);
      const p4 = rowValues(matrix, 5);
      assert.equal(p4[0], 'P4');
      assert.ok(Array.from(p4.slice(6)).every((v) => v === undefined || v === null || v === ''));
      const red = fill(matrix.getCell('G2'));
      const yellow = fill(matrix.getCell('H2'));
      const green = fill(matrix.getCell('I2'));
      assert.ok(red && yellow && green && new Set([red, yellow, green]).size === 3, `${red} ${yellow} ${green}`);
      assert.equal(fill(matrix.getCell('G3')), yellow);
      assert.equal(fill(matrix.getCell('I3')), red);
      assert.equal(fill(matrix.getCell('G4')), green);
      assert.equal(matrix.getCell('J2').value, null);
      assert.equal(matrix.views[0]?.state, 'frozen');
      assert.equal((matrix.views[0] as { xSplit?: number }).xSplit, 2);
      assert.equal((matrix.views[0] as { ySplit?: number }).ySplit, 1);
      assert.ok(matrix.autoFilter);
      assert.equal(matrix.getCell('E2').numFmt, '0.00');
    });

    test('Offers: one row per product × competitor; Summary: the figures per competitor and for the store', async () => {
      const book = await workbook((await get(t.app, `/WebApi/SummaryExportLatestGet/${key}`)).rawPayload);
      const offers = book.getWorksheet('Offers')!;
      const header = rowValues(offers, 1) as string[];
      const at = (name: string) => header.indexOf(name);
      assert.ok(at('competitor') > 0 && at('competitor_price') > 0 && at('difference') > 0);
      const rows: unknown[][] = [];
      offers.eachRow((row, n) => { if (n > 1) rows.push((row.values as unknown[]).slice(1)); });
      assert.equal(rows.length, 8);
      const gammaP2 = rows.find((r) => r[0] === 'P2' && r[at('competitor')] === 'gamma')!;
      assert.equal(gammaP2[at('competitor_price')], 80);
      assert.equal(gammaP2[at('competitor_available')], false);
      assert.equal(gammaP2[at('difference')], 20);
      const summary = book.getWorksheet('Summary')!;
      const cells: unknown[][] = [];
      summary.eachRow((row) => cells.push((row.values as unknown[]).slice(1)));
      const alpha = cells.find((r) => r[0] === 'alpha')!;
      assert.ok(alpha, JSON.stringify(cells));
      // alpha: 3 products priced; cheaper than us on P1, equal on P2, dearer on P3.
      assert.deepEqual(alpha.slice(1, 5), [3, 1, 1, 1]);
      const flat = JSON.stringify(cells);
      assert.match(flat, /products/i);
    });

    test('only_available keeps our available products; a profile replaces the product columns', async () => {
      const filtered = await workbook((await get(t.app, `/WebApi/SummaryExportLatestGet/${key}?only_available=true`)).rawPayload);
      const ids: unknown[] = [];
      filtered.getWorksheet('Matrix')!.eachRow((row, n) => { if (n > 1) ids.push(row.getCell(1).value); });
      assert.deepEqual(ids, ['P1', 'P2', 'P4']);
      const profiled = await workbook((await get(t.app, `/WebApi/SummaryExportLatestGet/${key}?profile_id=${profileId}`)).rawPayload);
      assert.deepEqual(rowValues(profiled.getWorksheet('Matrix')!, 1).slice(0, 3), ['SKU', 'Our', 'alpha']);
    });

    test('a list with no competitor data still gives a valid workbook that says so', async () => {
      const book = await workbook((await get(t.app, `/WebApi/SummaryExportLatestGet/${plainKey}`)).rawPayload);
      assert.deepEqual(book.worksheets.map((s) => s.name), ['Matrix', 'Offers', 'Summary']);
      let said = false;
      book.getWorksheet('Matrix')!.eachRow((row) => { if (JSON.stringify(row.values).includes('No competitor prices')) said = true; });
      assert.ok(said);
    });

    test('headers of §4: ETag, 304, format other than xlsx refused', async () => {
      const first = await get(t.app, `/WebApi/SummaryExportLatestGet/${key}`);
      assert.equal((await get(t.app, `/webapi/summaryexportlatestget/${key}/`, { 'if-none-match': String(first.headers.etag) })).statusCode, 304);
      assert.equal((await get(t.app, `/WebApi/SummaryExportLatestGet/${key}?format=XLSX`)).statusCode, 200);
      const csv = await get(t.app, `/WebApi/SummaryExportLatestGet/${key}?format=csv`);
      assert.equal(csv.statusCode, 400);
      assert.equal(JSON.parse(csv.body).code, 'invalid_parameter');
    });
  });
}
