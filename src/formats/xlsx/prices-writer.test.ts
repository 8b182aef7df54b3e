import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, it } from 'node:test';
import ExcelJS from 'exceljs';
import { XMLValidator } from 'fast-xml-parser';
import { LEGACY_COLUMNS, profileColumns, type ExportColumn } from '../../model/columns.js';
import type { PriceItem } from '../../model/price-item.js';
import { lastRowNumber, sheetRowSpec, XLSX_CONTENT_TYPE, xlsxWriter } from './prices-writer.js';
import type { RecordReader } from '../../model/record-spec.js';
import { MAX_ROWS } from './table-sheets.js';
import { MAX_CELL_TEXT } from './sheet-xml.js';
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

const render = (items: readonly PriceItem[], columns: readonly ExportColumn[] = LEGACY_COLUMNS, legacy = true) =>
  collect(xlsxWriter.render(inBatches(items), makeMeta(items, columns, legacy)));

/** What a column's cell must read back as: money in major units, absent as ''. */
function expectedValue(column: ExportColumn, item: PriceItem): unknown {
  const value = column.get(item);
  if (value === null) return '';
  return column.kind === 'money' ? (value as number) / 100 : value;
}

const PROFILE = profileColumns([
  { field: 'offer_id', title: 'Артикул', key: 'sku' },
  { field: 'name', title: 'Наименование' },
  { field: 'price', title: 'Цена' },
  { field: 'attributes.color', title: 'Цвет', key: 'color' },
  { value: 'да', title: 'Выгружать' },
]);

describe('xlsxWriter', () => {
  it('declares the xlsx format', () => {
    assert.equal(xlsxWriter.format, 'xlsx');
    assert.equal(xlsxWriter.extension, 'xlsx');
    assert.equal(xlsxWriter.contentType(makeMeta([])), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    assert.equal(XLSX_CONTENT_TYPE, xlsxWriter.contentType(makeMeta([])));
  });

  it('writes one sheet Prices with a bold, frozen, filtered header', async () => {
    const items = sampleItems();
    const workbook = await loadWorkbook(await render(items));
    assert.deepEqual(workbook.worksheets.map((sheet) => sheet.name), ['Prices']);
    const sheet = workbook.getWorksheet('Prices')!;
    assert.deepEqual(sheetValues(sheet)[0], LEGACY_COLUMNS.map((column) => column.title));
    for (let c = 1; c <= LEGACY_COLUMNS.length; c++) assert.equal(sheet.getRow(1).getCell(c).font?.bold, true, `header cell ${c} bold`);
    assert.equal(sheet.getCell('A2').font?.bold, undefined);
    assert.equal(sheet.views[0]?.state, 'frozen');
    assert.deepEqual([sheet.views[0]?.xSplit, sheet.views[0]?.ySplit], [0, 1]);
    assert.equal(sheet.autoFilter, `A1:H${items.length + 1}`);
    assert.ok((sheet.getColumn(2).width ?? 0) >= 30, 'the name column is wide enough to read');
  });

  it('writes well-formed parts, each declared in the content types', async () => {
    const parts = unzip(await render(sampleItems()));
    assert.deepEqual([...parts.keys()].sort(), [
      '[Content_Types].xml', '_rels/.rels', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml', 'xl/workbook.xml', 'xl/worksheets/sheet1.xml',
    ]);
    for (const [name, xml] of parts) assert.equal(XMLValidator.validate(xml), true, name);
    const types = parts.get('[Content_Types].xml')!;
    for (const part of ['/xl/workbook.xml', '/xl/styles.xml', '/xl/worksheets/sheet1.xml']) assert.ok(types.includes(`PartName="${part}"`), part);
  });

  it('names the filter range for Excel and LibreOffice', async () => {
    const items = sampleItems();
    const workbookXml = unzip(await render(items)).get('xl/workbook.xml')!;
    assert.match(workbookXml, /<definedName name="_xlnm\._FilterDatabase" localSheetId="0" hidden="1">'Prices'!\$A\$1:\$H\$13<\/definedName>/);
  });

  it('writes every value in order, with numbers as numbers and text as text', async () => {
    const items = sampleItems();
    const sheet = (await loadWorkbook(await render(items))).getWorksheet('Prices')!;
    const rows = sheetValues(sheet);
    assert.equal(rows.length, items.length + 1);
    items.forEach((item, i) => {
      assert.deepEqual(rows[i + 1], LEGACY_COLUMNS.map((column) => expectedValue(column, item)), `row of ${item.offer_id}`);
    });
    // A few cells spelled out, so that the expectation above is not only the code read twice.
    assert.deepEqual(rows[9], ['A-108', 'Fridge; 300 L', 1234567.89, 1299999, 'RUB', false, 5, '']);
    assert.equal(rows[2]![2], 799.5);
    assert.equal(rows[10]![1], 'Чехол 📱 для телефона');
    assert.equal(rows[1]![1], 'Смартфон «Галактика» 128 ГБ');
    assert.equal(rows[11]![1], 'Carriage\rreturn');
    assert.equal(rows[5]![1], ' leading space');
    assert.equal(rows[6]![1], 'trailing space ');
  });

  it('formats money with two decimals and integers as whole numbers', async () => {
    const sheet = (await loadWorkbook(await render(sampleItems()))).getWorksheet('Prices')!;
    for (const ref of ['C2', 'D2', 'C3', 'C10', 'D10']) {
      assert.equal(sheet.getCell(ref).type, ExcelJS.ValueType.Number, ref);
      assert.equal(sheet.getCell(ref).numFmt, '0.00', ref);
    }
    assert.equal(sheet.getCell('G2').type, ExcelJS.ValueType.Number);
    assert.equal(sheet.getCell('G2').numFmt, '0');
    assert.equal(sheet.getCell('F2').type, ExcelJS.ValueType.Boolean);
  });

  it('keeps a name starting with = as text, never a formula', async () => {
    const sheet = (await loadWorkbook(await render(sampleItems()))).getWorksheet('Prices')!;
    const cell = sheet.getCell('B9');
    assert.equal(cell.value, '=HYPERLINK("http://x")');
    assert.equal(cell.type, ExcelJS.ValueType.String);
    assert.equal(cell.formula, undefined);
    assert.doesNotMatch(unzip(await render(sampleItems())).get('xl/worksheets/sheet1.xml')!, /<f>/);
  });

  it('drops characters XML cannot hold, escapes markup and cuts overlong text', async () => {
    const base = sampleItems()[0]!;
    const tricky = [
      { ...base, offer_id: 'ctl', name: 'bell\u0007 nul\u0000 lone\uD800 end\uFFFE.' },
      { ...base, offer_id: 'esc', name: '<b>&amp;</b>' },
      { ...base, offer_id: 'long', name: 'я'.repeat(MAX_CELL_TEXT + 10) },
    ];
    const rows = sheetValues((await loadWorkbook(await render(tricky))).getWorksheet('Prices')!);
    assert.equal(rows[1]![1], 'bell nul lone end.');
    assert.equal(rows[2]![1], '<b>&amp;</b>');
    assert.equal(rows[3]![1], 'я'.repeat(MAX_CELL_TEXT), 'cut to the longest text a cell holds');
  });

  it('escapes text that Excel would read as an escaped character', async () => {
    // Excel and LibreOffice read `_x0041_` in a cell as "A" (ECMA-376 ST_Xstring); escaping the
    // underscore keeps the text literal there (checked with LibreOffice below). exceljs and
    // openpyxl 3.0 do not decode inline strings, so they show the escape itself.
    const item = { ...sampleItems()[0]!, name: 'literal _x0041_ end' };
    const sheetXml = unzip(await render([item])).get('xl/worksheets/sheet1.xml')!;
    assert.match(sheetXml, /<t>literal _x005F_x0041_ end<\/t>/);
  });

  it('writes a profile\'s columns under its titles', async () => {
    const items = sampleItems().map((item, i) => ({ ...item, attributes: i === 0 ? { color: 'чёрный' } : null }));
    const sheet = (await loadWorkbook(await render(items, PROFILE, false))).getWorksheet('Prices')!;
    const rows = sheetValues(sheet);
    assert.deepEqual(rows[0], ['Артикул', 'Наименование', 'Цена', 'Цвет', 'Выгружать']);
    assert.deepEqual(rows[1], ['A-100', 'Смартфон «Галактика» 128 ГБ', 19990, 'чёрный', 'да']);
    assert.deepEqual(rows[2], ['A-101', 'Case, black', 799.5, '', 'да']);
    assert.equal(sheet.getCell('C2').numFmt, '0.00');
    assert.equal(sheet.autoFilter, `A1:E${items.length + 1}`);
  });

  it('gives a valid workbook for an empty list', async () => {
    const sheet = (await loadWorkbook(await render([]))).getWorksheet('Prices')!;
    assert.deepEqual(sheetValues(sheet), [LEGACY_COLUMNS.map((column) => column.title)]);
    assert.equal(sheet.autoFilter, 'A1:H1');
  });

  it('gives the same bytes for the same list', async () => {
    const items = sampleItems();
    assert.deepEqual(await render(items), await render(items));
  });

  describe('streaming', () => {
    const many = (count: number): PriceItem[] => {
      const base = sampleItems()[0]!;
      return Array.from({ length: count }, (_, i) => ({ ...base, offer_id: `SKU-${i}`, name: `Товар ${i}`, price: i }));
    };

    it('sends bytes before the list has been read to the end', async () => {
      const items = many(40_000);
      let batchesRead = 0;
      async function* source(): AsyncGenerator<readonly PriceItem[]> {
        for await (const batch of inBatches(items, 1000)) {
          batchesRead += 1;
          yield batch;
        }
      }
      const iterator = xlsxWriter.render(source(), makeMeta(items))[Symbol.asyncIterator]();
      await iterator.next();
      await iterator.next();
      assert.ok(batchesRead < 40, `first bytes after ${batchesRead} of 40 batches`);
      await iterator.return?.();
    });

    it('stops reading the list when the consumer stops', async () => {
      const items = many(40_000);
      let closed = false;
      let batchesRead = 0;
      async function* source(): AsyncGenerator<readonly PriceItem[]> {
        try {
          for await (const batch of inBatches(items, 1000)) {
            batchesRead += 1;
            yield batch;
          }
        } finally {
          closed = true;
        }
      }
      for await (const _ of xlsxWriter.render(source(), makeMeta(items))) if (batchesRead >= 3) break;
      for (let i = 0; i < 50 && !closed; i++) await tick();
      assert.ok(closed, 'the source was closed (a database cursor would be released)');
      assert.ok(batchesRead < 40, `read ${batchesRead} of 40 batches`);
    });

    it('fails when the list cannot be read', async () => {
      async function* source(): AsyncGenerator<readonly PriceItem[]> {
        yield sampleItems();
        throw new Error('database went away');
      }
      await assert.rejects(collect(xlsxWriter.render(source(), makeMeta([]))), /database went away/);
    });
  });

  describe('rows a store builds (store/sheet-rows.contract.test.ts holds them to these rows)', () => {
    it('describes each column as the cell writeColumnCell writes', () => {
      const spec = sheetRowSpec(LEGACY_COLUMNS, false)!;
      assert.equal(spec.firstRow, 2);
      assert.deepEqual(spec.cells.map((cell) => [cell.column, cell.kind]), [
        ['A', 'text'], ['B', 'text'], ['C', 'money'], ['D', 'money'], ['E', 'text'], ['F', 'boolean'], ['G', 'integer'], ['H', 'text'],
      ]);
      assert.deepEqual(spec.cells[2], { kind: 'money', field: 'price', column: 'C', open: '" s="2"><v>', close: '</v></c>' });
      const constant = sheetRowSpec(profileColumns([{ field: 'offer_id', title: 'id' }, { value: '=1', title: 'c' }]), true)!;
      assert.deepEqual(constant.cells[1], { kind: 'literal', column: 'B', tail: `" t="inlineStr"><is><t>'=1</t></is></c>` });
      assert.equal(constant.escapeFormulas, true);
    });

    it('is no spec for an attribute, or for a header whose last column is empty', () => {
      assert.equal(sheetRowSpec(PROFILE, false), null);
      assert.equal(sheetRowSpec(profileColumns([{ field: 'name', title: 'n' }, { field: 'price', title: '' }]), false), null);
    });

    it("puts a store's rows after the header and filters down to its last row", async () => {
      const rows = '<row r="2"><c r="A2" t="inlineStr"><is><t>X-1</t></is></c></row><row r="3"><c r="A3" t="inlineStr"><is><t>X-2</t></is></c></row>';
      const records: RecordReader = async function* () {
        yield Buffer.from(rows);
      };
      const bytes = await collect(xlsxWriter.render(inBatches([]), makeMeta([]), records));
      const sheet = unzip(bytes).get('xl/worksheets/sheet1.xml')!;
      assert.ok(sheet.includes(`<c r="H1" s="1" t="inlineStr"><is><t>url</t></is></c></row>${rows}</sheetData><autoFilter ref="A1:H3"/>`));
      assert.equal(lastRowNumber(Buffer.from(rows)), 3);
      assert.throws(() => lastRowNumber(Buffer.from('<c r="A2"/>')), /end with no row/);
    });

    it('asks the store only for a list that fits one sheet', async () => {
      let asked = 0;
      const records: RecordReader = () => {
        asked += 1;
        return null;
      };
      const items = sampleItems();
      await collect(xlsxWriter.render(inBatches(items), makeMeta(items), records));
      assert.equal(asked, 1);
      const huge = { ...makeMeta(items), priceList: { ...makeMeta(items).priceList, itemCount: MAX_ROWS } };
      await collect(xlsxWriter.render(inBatches(items), huge, records));
      assert.equal(asked, 1, 'a list that may need a second sheet takes the JavaScript rows');
    });

    it("stops reading the store's rows when the consumer stops", async () => {
      let closed = false;
      const records: RecordReader = async function* () {
        try {
          for (let row = 2; ; row++) yield Buffer.from(`<row r="${row}">${'<c r="A1"/>'.repeat(5000)}</row>`);
        } finally {
          closed = true;
        }
      };
      let chunks = 0;
      for await (const _ of xlsxWriter.render(inBatches([]), makeMeta([]), records)) if (++chunks >= 5) break;
      for (let i = 0; i < 50 && !closed; i++) await tick();
      assert.ok(closed, 'the rows were closed (the page queries stop)');
    });
  });

  it('opens in LibreOffice', async (t) => {
    const binary = soffice();
    if (binary === null) return t.skip('LibreOffice (soffice) is not installed: apt-get install libreoffice-calc-nogui to run this check');
    const items = [...sampleItems(), toPriceItem({ offer_id: 'esc', name: 'literal _x0041_ & <b>', price: 5 })];
    const csv = convertWithLibreOffice(binary, await render(items)).get('Prices')!;
    const lines = csv.split('\n');
    assert.equal(lines[0], 'offer_id,name,price,old_price,currency,available,quantity,url');
    assert.equal(lines[1], 'A-100,Смартфон «Галактика» 128 ГБ,19990.00,21990.00,RUB,TRUE,7,https://demo-shop.example/p/a-100');
    assert.ok(csv.includes('A-107,"=HYPERLINK(""http://x"")",1.00,,RUB,TRUE,,'), 'the = name stays text');
    assert.ok(csv.includes('A-108,Fridge; 300 L,1234567.89,1299999.00,RUB,FALSE,5,'));
    assert.ok(csv.includes('A-109,Чехол 📱 для телефона,0.00,,RUB,TRUE,12,'));
    assert.ok(csv.includes('esc,literal _x0041_ & <b>,5.00,,RUB,TRUE,,'));
  });

  it('opens in openpyxl', async (t) => {
    const python = openpyxlPython();
    if (python === null) return t.skip('no Python with openpyxl (apt-get install python3-openpyxl) to run this check');
    const items = sampleItems();
    const read = runOpenpyxl(
      python,
      await render(items),
      "ws = wb['Prices']\nprint(json.dumps({'names': wb.sheetnames, 'freeze': ws.freeze_panes, 'filter': ws.auto_filter.ref,\n" +
        "  'bold': ws['A1'].font.b, 'fmt': ws['C2'].number_format, 'rows': [list(r) for r in ws.iter_rows(values_only=True)]}))",
    ) as { names: string[]; freeze: string; filter: string; bold: boolean; fmt: string; rows: unknown[][] };
    assert.deepEqual(read.names, ['Prices']);
    assert.equal(read.freeze, 'A2');
    assert.equal(read.filter, 'A1:H13');
    assert.equal(read.bold, true);
    assert.equal(read.fmt, '0.00');
    items.forEach((item, i) => {
      const expected = LEGACY_COLUMNS.map((column) => {
        const value = expectedValue(column, item);
        return value === '' ? null : value;
      });
      assert.deepEqual(read.rows[i + 1], expected, `row of ${item.offer_id}`);
    });
  });
});
