import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type ExcelJS from 'exceljs';
import { XMLValidator } from 'fast-xml-parser';
import { profileColumns, type ExportColumn } from '../../model/columns.js';
import type { PriceItem } from '../../model/price-item.js';
import { NO_COMPETITORS_NOTE } from './matrix-sheets.js';
import { FILL_COLOURS } from './styles.js';
import { renderSummaryMatrix, SUMMARY_CONTENT_TYPE } from './summary-writer.js';
import {
  collect,
  convertWithLibreOffice,
  inBatches,
  loadWorkbook,
  makeMeta,
  openpyxlPython,
  runOpenpyxl,
  sampleItems,
  sheetValues,
  soffice,
  toPriceItem,
  unzip,
} from '../../../test/support/workbooks.js';

async function render(items: readonly PriceItem[], columns?: readonly ExportColumn[]) {
  const meta = columns ? makeMeta(items, columns, false) : makeMeta(items);
  return collect(renderSummaryMatrix(() => inBatches(items, 3), meta));
}
const open = async (items: readonly PriceItem[], columns?: readonly ExportColumn[]) => loadWorkbook(await render(items, columns));

const PRODUCT_TITLES = ['offer_id', 'name', 'vendor', 'category', 'price', 'old_price'];
const FIGURE_TITLES = ['min', 'avg', 'max', 'rank', 'gap_to_min_%'];
const fillOf = (cell: ExcelJS.Cell): string | undefined =>
  cell.fill?.type === 'pattern' ? (cell.fill.fgColor?.argb ?? undefined) : undefined;

/** Prices chosen to show every colour, a shared rank, a free competitor, a repeated one and a free product. */
const EDGE_ITEMS = [
  { offer_id: 'P1', name: 'One', price: 100, competitors: [
    { name: 'alpha', price: 90, available: true }, { name: 'beta', price: 100, available: false }, { name: 'gamma', price: 120 }] },
  { offer_id: 'P2', name: 'Two', price: 50, competitors: [{ name: 'beta', price: 0 }] },
  { offer_id: 'P3', name: 'Three', price: 0, competitors: [{ name: 'alpha', price: 10 }, { name: 'alpha', price: 5 }] },
  { offer_id: 'P4', name: 'Four', price: 30 },
].map(toPriceItem);

describe('renderSummaryMatrix', () => {
  it('is an xlsx workbook with the sheets Matrix, Offers, Summary', async () => {
    assert.equal(SUMMARY_CONTENT_TYPE, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    const workbook = await open(sampleItems());
    assert.deepEqual(workbook.worksheets.map((sheet) => sheet.name), ['Matrix', 'Offers', 'Summary']);
  });

  it('writes well-formed parts', async () => {
    for (const [name, xml] of unzip(await render(EDGE_ITEMS))) assert.equal(XMLValidator.validate(xml), true, name);
  });

  it('reads the list three times (tallies, Matrix, Offers) rather than hold it', async () => {
    const items = sampleItems();
    let reads = 0;
    await collect(renderSummaryMatrix(() => (reads++, inBatches(items, 2)), makeMeta(items)));
    assert.equal(reads, 3);
  });

  describe('Matrix', () => {
    it('orders competitors by products priced, then by name', async () => {
      const sheet = (await open(sampleItems())).getWorksheet('Matrix')!;
      assert.deepEqual(sheetValues(sheet)[0], [...PRODUCT_TITLES, 'shop-b.example', 'shop-c.example', 'shop-d.example', ...FIGURE_TITLES]);
      assert.deepEqual(sheetValues((await open(EDGE_ITEMS)).getWorksheet('Matrix')!)[0], [...PRODUCT_TITLES, 'alpha', 'beta', 'gamma', ...FIGURE_TITLES]);
    });

    it('writes every price, min, avg, max, rank and gap', async () => {
      const rows = sheetValues((await open(sampleItems())).getWorksheet('Matrix')!);
      assert.equal(rows.length, 13);
      assert.deepEqual(rows[1], ['A-100', 'Смартфон «Галактика» 128 ГБ', 'Galaktika', 'Электроника / Смартфоны', 19990, 21990,
        19490, 20500, '', 19490, 19995, 20500, 2, 2.57]);
      assert.deepEqual(rows[2], ['A-101', 'Case, black', '', 'Электроника / Аксессуары', 799.5, '', 790, '', '', 790, 790, 790, 2, 1.2]);
      assert.deepEqual(rows[9], ['A-108', 'Fridge; 300 L', 'Frost', 'Бытовая техника / Холодильники', 1234567.89, 1299999,
        '', 1250000, 1199000, 1199000, 1224500, 1250000, 2, 2.97]);
      // A product nobody else sells: its row, with empty competitor cells and figures.
      assert.deepEqual(rows[8], ['A-107', '=HYPERLINK("http://x")', '', '', 1, '', '', '', '', '', '', '', '', '']);
      assert.deepEqual(rows.slice(1).map((row) => row[0]), sampleItems().map((item) => item.offer_id));
    });

    it('handles shared ranks, free competitors and a competitor named twice', async () => {
      const rows = sheetValues((await open(EDGE_ITEMS)).getWorksheet('Matrix')!);
      assert.deepEqual(rows[1]!.slice(4), [100, '', 90, 100, 120, 90, 103.33, 120, 2, 11.11]);
      assert.deepEqual(rows[2]!.slice(4), [50, '', '', 0, '', 0, 0, 0, 2, ''], 'no gap when min is 0');
      assert.deepEqual(rows[3]!.slice(4), [0, '', 10, '', '', 10, 10, 10, 1, -100], 'the first of two entries counts');
      assert.deepEqual(rows[4]!.slice(4), [30, '', '', '', '', '', '', '', '', '']);
    });

    it('fills a competitor red when cheaper, yellow when equal, green when dearer', async () => {
      const sheet = (await open(EDGE_ITEMS)).getWorksheet('Matrix')!;
      assert.equal(fillOf(sheet.getCell('G2')), FILL_COLOURS.cheaper);
      assert.equal(fillOf(sheet.getCell('H2')), FILL_COLOURS.equal);
      assert.equal(fillOf(sheet.getCell('I2')), FILL_COLOURS.dearer);
      assert.equal(fillOf(sheet.getCell('H3')), FILL_COLOURS.cheaper);
      assert.equal(fillOf(sheet.getCell('G4')), FILL_COLOURS.dearer);
      assert.equal(fillOf(sheet.getCell('J2')), undefined, 'min is not filled');
      assert.deepEqual([FILL_COLOURS.cheaper, FILL_COLOURS.equal, FILL_COLOURS.dearer], ['FFFFC7CE', 'FFFFEB9C', 'FFC6EFCE']);
    });

    it('freezes the header and two columns, filters, and formats two decimals', async () => {
      const sheet = (await open(sampleItems())).getWorksheet('Matrix')!;
      assert.equal(sheet.views[0]?.state, 'frozen');
      assert.deepEqual([sheet.views[0]?.xSplit, sheet.views[0]?.ySplit], [2, 1]);
      assert.equal(sheet.autoFilter, 'A1:N13');
      assert.equal(sheet.getCell('G1').font?.bold, true);
      for (const ref of ['E2', 'G2', 'H2', 'J2', 'K2', 'L2', 'N2']) assert.equal(sheet.getCell(ref).numFmt, '0.00', ref);
      assert.equal(sheet.getCell('M2').numFmt, '0');
      assert.ok((sheet.getColumn(2).width ?? 0) >= 30);
      assert.ok((sheet.getColumn(7).width ?? 0) >= 'shop-b.example'.length);
    });

    it('names each filter range for Excel and LibreOffice', async () => {
      const workbookXml = unzip(await render(sampleItems())).get('xl/workbook.xml')!;
      assert.match(workbookXml, /localSheetId="0" hidden="1">'Matrix'!\$A\$1:\$N\$13</);
      assert.match(workbookXml, /localSheetId="1" hidden="1">'Offers'!\$A\$1:\$K\$6</);
    });
  });

  describe('Offers', () => {
    it('writes one row per product and competitor', async () => {
      const sheet = (await open(EDGE_ITEMS)).getWorksheet('Offers')!;
      const rows = sheetValues(sheet);
      assert.deepEqual(rows[0], [...PRODUCT_TITLES, 'competitor', 'competitor_price', 'competitor_available', 'difference', 'difference_%']);
      assert.deepEqual(rows.slice(1).map((row) => [row[0], ...row.slice(4)]), [
        ['P1', 100, '', 'alpha', 90, true, 10, 11.11],
        ['P1', 100, '', 'beta', 100, false, 0, 0],
        ['P1', 100, '', 'gamma', 120, '', -20, -16.67],
        ['P2', 50, '', 'beta', 0, '', 50, ''],
        ['P3', 0, '', 'alpha', 10, '', -10, -100], // availability not given: empty
      ]);
      assert.equal(sheet.autoFilter, 'A1:K6');
      assert.equal(sheet.views[0]?.state, 'frozen');
      assert.deepEqual([sheet.views[0]?.xSplit, sheet.views[0]?.ySplit], [2, 1]);
      assert.equal(sheet.getCell('J2').numFmt, '0.00');
      assert.equal(fillOf(sheet.getCell('H2')), FILL_COLOURS.cheaper);
    });
  });

  describe('Summary', () => {
    it('tallies each competitor and the store', async () => {
      const rows = sheetValues((await open(EDGE_ITEMS)).getWorksheet('Summary')!);
      assert.deepEqual(rows[0], ['competitor', 'products_priced', 'cheaper', 'equal', 'dearer', 'price_index']);
      assert.deepEqual(rows.slice(1, 4), [
        ['alpha', 2, 1, 0, 1, 90], // P3 (ours 0) has no index
        ['beta', 2, 1, 1, 0, 50],
        ['gamma', 1, 0, 0, 1, 120],
      ]);
      const figures = Object.fromEntries(rows.slice(5, 12).map((row) => [row[0], row[1]]));
      assert.deepEqual(figures, {
        store: 'Demo Shop (demo-shop)',
        price_list_version: 3,
        published_at: '2026-11-22T07:00:00.000Z',
        products: 4,
        products_with_competitor_prices: 3,
        products_ranked_first: 1,
        market_index: 48.39, // P1: 100 ÷ 103.33…; P2 left out (average 0); P3: 0
      });
    });

    it('tallies the fixture', async () => {
      const rows = sheetValues((await open(sampleItems())).getWorksheet('Summary')!);
      assert.deepEqual(rows.slice(1, 4), [
        ['shop-b.example', 2, 2, 0, 0, 98.16],
        ['shop-c.example', 2, 0, 0, 2, 101.9],
        ['shop-d.example', 1, 1, 0, 0, 97.12],
      ]);
    });
  });

  it('puts a profile\'s columns in place of the product columns, with our price', async () => {
    const profile = profileColumns([
      { field: 'offer_id', title: 'Артикул' },
      { field: 'name', title: 'Наименование' },
      { field: 'attributes.color', title: 'Цвет' },
    ]);
    const workbook = await open(sampleItems(), profile);
    assert.deepEqual(sheetValues(workbook.getWorksheet('Matrix')!)[0]!.slice(0, 5), ['Артикул', 'Наименование', 'Цвет', 'price', 'shop-b.example']);
    assert.deepEqual(sheetValues(workbook.getWorksheet('Matrix')!)[1]!.slice(0, 6), ['A-100', 'Смартфон «Галактика» 128 ГБ', '', 19990, 19490, 20500]);
    assert.deepEqual(sheetValues(workbook.getWorksheet('Offers')!)[0]!.slice(0, 5), ['Артикул', 'Наименование', 'Цвет', 'price', 'competitor']);

    const withPrice = profileColumns([{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Цена' }]);
    const header = sheetValues((await open(sampleItems(), withPrice)).getWorksheet('Matrix')!)[0];
    assert.deepEqual(header!.slice(0, 3), ['SKU', 'Цена', 'shop-b.example']);
  });

  it('says so when the list has no competitor prices', async () => {
    const items = sampleItems().map((item) => ({ ...item, competitors: null }));
    const workbook = await open(items);
    assert.deepEqual(workbook.worksheets.map((sheet) => sheet.name), ['Matrix', 'Offers', 'Summary']);
    const matrix = sheetValues(workbook.getWorksheet('Matrix')!);
    assert.deepEqual(matrix[0], [...PRODUCT_TITLES, ...FIGURE_TITLES]);
    assert.equal(matrix[1]![0], NO_COMPETITORS_NOTE);
    assert.equal(matrix.length, 2);
    assert.equal(sheetValues(workbook.getWorksheet('Offers')!).length, 1);
    const summary = sheetValues(workbook.getWorksheet('Summary')!);
    assert.equal(summary[1]![0], NO_COMPETITORS_NOTE);
    const figures = Object.fromEntries(summary.slice(3, 10).map((row) => [row[0], row[1]]));
    assert.equal(figures.products, 12);
    assert.equal(figures.products_with_competitor_prices, 0);
    assert.equal(figures.market_index, '');
    // An empty list too.
    assert.equal(sheetValues((await open([])).getWorksheet('Matrix')!)[1]![0], NO_COMPETITORS_NOTE);
  });

  it('opens in LibreOffice', async (t) => {
    const binary = soffice();
    if (binary === null) return t.skip('LibreOffice (soffice) is not installed: apt-get install libreoffice-calc-nogui to run this check');
    const bytes = await render(sampleItems());
    const sheets = convertWithLibreOffice(binary, bytes);
    assert.deepEqual([...sheets.keys()], ['Matrix', 'Offers', 'Summary']);
    const matrix = sheets.get('Matrix')!.split('\n');
    assert.equal(matrix[0], 'offer_id,name,vendor,category,price,old_price,shop-b.example,shop-c.example,shop-d.example,min,avg,max,rank,gap_to_min_%');
    assert.equal(matrix[1], 'A-100,Смартфон «Галактика» 128 ГБ,Galaktika,Электроника / Смартфоны,19990.00,21990.00,19490.00,20500.00,,19490.00,19995.00,20500.00,2,2.57');
    const summary = sheets.get('Summary')!.split('\n');
    assert.equal(summary[1], 'shop-b.example,2,2,0,0,98.16');
  });

  it('opens in openpyxl', async (t) => {
    const python = openpyxlPython();
    if (python === null) return t.skip('no Python with openpyxl (apt-get install python3-openpyxl) to run this check');
    const read = runOpenpyxl(
      python,
      await render(EDGE_ITEMS),
      "ws = wb['Matrix']\nprint(json.dumps({'names': wb.sheetnames, 'freeze': ws.freeze_panes, 'filter': ws.auto_filter.ref,\n" +
        "  'fills': [ws[c].fill.fgColor.rgb for c in ('G2', 'H2', 'I2')], 'row': [c.value for c in ws[2]]}))",
    ) as { names: string[]; freeze: string; filter: string; fills: string[]; row: unknown[] };
    assert.deepEqual(read.names, ['Matrix', 'Offers', 'Summary']);
    assert.equal(read.freeze, 'C2');
    assert.equal(read.filter, 'A1:N5');
    assert.deepEqual(read.fills, [FILL_COLOURS.cheaper, FILL_COLOURS.equal, FILL_COLOURS.dearer]);
    assert.deepEqual(read.row, ['P1', 'One', null, null, 100, null, 90, 100, 120, 90, 103.33, 120, 2, 11.11]);
  });
});
