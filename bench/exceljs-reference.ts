/**
 * The reference the XLSX figures are measured against: exceljs's streaming WorkbookWriter
 * writing the same Prices sheet (frozen bold header, autofilter, `0.00` money, inline
 * strings) into a byte counter. Shared by bench/references.ts and bench/xlsx.ts.
 */
import { Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { LEGACY_COLUMNS } from '../src/model/columns.js';
import type { PriceItem } from '../src/model/price-item.js';

export async function exceljsBytes(items: readonly PriceItem[]): Promise<number> {
  let bytes = 0;
  const sink = new Writable({ write(chunk: Buffer, _encoding, done) { bytes += chunk.length; done(); } });
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, useStyles: true, useSharedStrings: false });
  const sheet = workbook.addWorksheet('Prices', { views: [{ state: 'frozen', ySplit: 1 }] });
  sheet.columns = LEGACY_COLUMNS.map((column) => ({ header: column.title, key: column.key, width: 14, style: column.kind === 'money' ? { numFmt: '0.00' } : {} }));
  sheet.getRow(1).font = { bold: true };
  sheet.autoFilter = `A1:H${items.length + 1}`;
  for (const item of items) {
    sheet.addRow(LEGACY_COLUMNS.map((column) => {
      const value = column.get(item);
      return column.kind === 'money' && typeof value === 'number' ? value / 100 : value;
    })).commit();
  }
  sheet.commit();
  await workbook.commit();
  return bytes;
}
