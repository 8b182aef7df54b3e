import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import { profileColumns } from '../model/columns.js';
import type { PriceItem } from '../model/price-item.js';
import { csvWriter, recordSpec, tsvWriter } from './delimited.js';
import { escapeFormula } from '../model/formula-escape.js';
import { buildMeta, legacySample, plainItem, readFixture, renderToBuffer } from '../../test/support/format-items.js';
import { xlsxWriter } from './xlsx/prices-writer.js';

/** One item per dangerous first character (CONTRACT §14), then harmless ones. */
const DANGEROUS = ['=SUM(A1:A9)', '+7 495 000', '-2+3', '@cmd', '\tTabbed', '\rReturn'];
const HARMLESS = ['Plain', ' =not first', "'already quoted", 'Ёлка = 5'];
const items: PriceItem[] = [...DANGEROUS, ...HARMLESS].map((name, index) => plainItem({ offer_id: `F-${index}`, name, price: 100 }));

const columns = profileColumns([{ field: 'offer_id', title: 'id' }, { field: 'name', title: '=title' }, { field: 'price', title: 'price' }, { value: '=1+1', title: 'const' }]);
const meta = (escape_formulas?: boolean) => buildMeta(items, { columns, tabular: escape_formulas === undefined ? {} : { escape_formulas } });

const names = (rows: string[][]) => rows.slice(1).map((row) => row[1]);

describe('escape_formulas (CONTRACT §14)', () => {
  it('prefixes = + - @ tab CR with a quote, and nothing else', () => {
    assert.deepEqual(DANGEROUS.map(escapeFormula), DANGEROUS.map((text) => `'${text}`));
    assert.deepEqual(HARMLESS.map(escapeFormula), HARMLESS);
  });

  for (const writer of [csvWriter, tsvWriter]) {
    const delimiter = writer === csvWriter ? ',' : '\t';
    const read = (bytes: Buffer) => parse(bytes, { delimiter, relax_column_count: true }) as string[][];

    it(`${writer.format}: on, every text value that starts a formula reads back with the leading quote; numbers and headers untouched`, async () => {
      const rows = read(await renderToBuffer(writer, items, meta(true)));
      assert.deepEqual(names(rows), [...DANGEROUS.map((text) => `'${text}`), ...HARMLESS]);
      assert.deepEqual(rows[0], ['id', '=title', 'price', 'const']);
      assert.ok(rows.slice(1).every((row) => row[2] === '1.00' && row[3] === "'=1+1"));
    });

    it(`${writer.format}: off by default, and off gives the values as published`, async () => {
      const byDefault = await renderToBuffer(writer, items, meta());
      assert.deepEqual(byDefault, await renderToBuffer(writer, items, meta(false)));
      assert.deepEqual(names(read(byDefault)), [...DANGEROUS, ...HARMLESS]);
    });
  }

  it('csv: on takes the JavaScript path (no store-built records), and for harmless values gives the bytes of off', async () => {
    const harmless = items.slice(DANGEROUS.length);
    const onMeta = buildMeta(harmless, { columns: columns.slice(0, 3), tabular: { escape_formulas: true } });
    assert.equal(recordSpec(onMeta.columns, onMeta.tabular), null);
    assert.notEqual(recordSpec(onMeta.columns, { ...onMeta.tabular, escape_formulas: false }), null);
    const offMeta = buildMeta(harmless, { columns: columns.slice(0, 3) });
    assert.deepEqual(await renderToBuffer(csvWriter, harmless, onMeta), await renderToBuffer(csvWriter, harmless, offMeta));
  });

  it('the legacy layout never escapes: its bytes stay the golden file even with the option set', async () => {
    const { items: sample } = legacySample();
    const legacyWithOption = { ...buildMeta(sample), tabular: { ...buildMeta(sample).tabular, escape_formulas: true } };
    assert.deepEqual(await renderToBuffer(csvWriter, sample, legacyWithOption), readFixture('legacy-sample.csv'));
    assert.deepEqual(await renderToBuffer(tsvWriter, sample, legacyWithOption), readFixture('legacy-sample.tsv'));
    const legacyCsv = await renderToBuffer(csvWriter, items, { ...buildMeta(items), tabular: { ...buildMeta(items).tabular, escape_formulas: true } });
    assert.match(legacyCsv.toString('utf8'), /\r\nF-0,=SUM\(A1:A9\),/);
  });

  it('xlsx: on, text cells read back (exceljs) with the quote; off and legacy, as published', async () => {
    const cellsOf = async (bytes: Buffer) => {
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
      const sheet = workbook.getWorksheet('Prices')!;
      const values: unknown[] = [];
      sheet.eachRow((row, number) => { if (number > 1) values.push(row.getCell(2).value); });
      return values;
    };
    assert.deepEqual(await cellsOf(await renderToBuffer(xlsxWriter, items, meta(true))), [...DANGEROUS.map((text) => `'${text}`), ...HARMLESS]);
    assert.deepEqual(await cellsOf(await renderToBuffer(xlsxWriter, items, meta())), [...DANGEROUS, ...HARMLESS]);
    const legacy = { ...buildMeta(items), tabular: { ...buildMeta(items).tabular, escape_formulas: true } };
    assert.deepEqual(await cellsOf(await renderToBuffer(xlsxWriter, items, legacy)), [...DANGEROUS, ...HARMLESS]);
  });
});
