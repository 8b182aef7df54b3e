/*
 * Test-only helpers for the xlsx writers: the fixture normalized to PriceItem (by the formats'
 * test normalizer), an ExportMeta built by hand, byte
 * collection, reading a workbook back (exceljs, a bare unzip, openpyxl), and LibreOffice.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { LEGACY_COLUMNS, type ExportColumn } from '../../src/model/columns.js';
import type { PriceItem } from '../../src/model/price-item.js';
import { DEFAULT_TABULAR_OPTIONS } from '../../src/model/profile.js';
import { normalizeItem } from './format-items.js';
import type { ExportMeta } from '../../src/model/export-writer.js';

type Raw = Record<string, unknown>;

/** A fixture item (major units) → PriceItem with CONTRACT §2's defaults: the formats' test normalizer. */
export const toPriceItem = (raw: Raw): PriceItem => normalizeItem(raw);

/** test/fixtures/legacy-sample.json as PriceItems. */
export function sampleItems(): PriceItem[] {
  const url = new URL('../fixtures/legacy-sample.json', import.meta.url);
  const raw = JSON.parse(readFileSync(url, 'utf8')) as { items: Raw[] };
  return raw.items.map(toPriceItem);
}

export function makeMeta(items: readonly PriceItem[], columns: readonly ExportColumn[] = LEGACY_COLUMNS, legacy = true): ExportMeta {
  return {
    store: { id: 'demo-shop', name: 'Demo Shop', currency: 'RUB', url: 'https://demo-shop.example', company: null },
    priceList: {
      version: 3,
      publishedAt: new Date('2026-11-22T07:00:00Z'),
      itemCount: items.length,
      currencies: [...new Set(items.map((item) => item.currency))],
    },
    columns,
    legacy,
    tabular: DEFAULT_TABULAR_OPTIONS,
    categories: [],
  };
}

/** The items in batches of `size`, as the store hands them out. */
export async function* inBatches<T>(items: readonly T[], size = 5): AsyncGenerator<readonly T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

export async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

export async function loadWorkbook(bytes: Buffer): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
  return workbook;
}

/** Values of a sheet's rows as plain arrays (index 0 is column A); '' stands for an empty cell. */
export function sheetValues(sheet: ExcelJS.Worksheet): unknown[][] {
  const rows: unknown[][] = [];
  sheet.eachRow({ includeEmpty: true }, (row, rowNumber) => {
    const values: unknown[] = [];
    for (let c = 1; c <= sheet.columnCount; c++) {
      const value = row.getCell(c).value;
      values.push(value ?? '');
    }
    rows[rowNumber - 1] = values;
  });
  return rows;
}

export const soffice = (): string | null => {
  const found = spawnSync('sh', ['-c', 'command -v soffice || command -v libreoffice'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
};

/**
 * Converts every sheet of a workbook to CSV with LibreOffice, as it shows the values
 * (two decimals where formatted so): sheet name → CSV text, in sheet order.
 * LibreOffice exits 0 even when it could not open the file, so missing output is the failure.
 */
export function convertWithLibreOffice(binary: string, bytes: Buffer): Map<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'xlsx-lo-'));
  try {
    writeFileSync(join(dir, 'book.xlsx'), bytes);
    // Tokens: separator 44 (,), quote 34 ("), charset 76 (UTF-8), start line, column formats,
    // language, quote all text, detect special numbers, save as shown, export formulas,
    // remove spaces, sheet -1 = every sheet into `book-<sheet name>.csv` (LibreOffice ≥ 7.2).
    const filter = 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1';
    const convert = (attempt: number) =>
      spawnSync(binary, ['--headless', `-env:UserInstallation=file://${dir}/profile-${attempt}`, '--convert-to', filter, '--outdir', dir, join(dir, 'book.xlsx')], {
        encoding: 'utf8',
        timeout: 120_000,
      });
    // A workbook LibreOffice cannot open still exits 0 (below: no output, a failure). A crash of
    // its own start-up with a fresh profile ("Unspecified Application Error", an abort, under a
    // full parallel `npm test`) exits otherwise: that one run is made again, once, with a new profile.
    let run = convert(1);
    if (run.status !== 0) run = convert(2);
    const order = [...run.stdout.matchAll(/Writing sheet (.+?) ->/g)].map((match) => match[1]!);
    const sheets = new Map<string, string>();
    for (const name of order) sheets.set(name, readFileSync(join(dir, `book-${name}.csv`), 'utf8'));
    if (sheets.size === 0) throw new Error(`LibreOffice did not convert the workbook: ${run.stderr || run.stdout}`);
    return sheets;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The parts of a zip archive by name, inflated — enough of a reader to look at the XML that
 * exceljs does not surface (defined names with their sheet, the content types).
 */
export function unzip(bytes: Buffer): Map<string, string> {
  const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
  let end = bytes.length - 22;
  while (end >= 0 && bytes.readUInt32LE(end) !== END_OF_CENTRAL_DIRECTORY) end -= 1;
  if (end < 0) throw new Error('not a zip archive');
  const count = bytes.readUInt16LE(end + 10);
  let at = bytes.readUInt32LE(end + 16);
  const parts = new Map<string, string>();
  for (let i = 0; i < count; i++) {
    const method = bytes.readUInt16LE(at + 10);
    const compressedSize = bytes.readUInt32LE(at + 20);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const local = bytes.readUInt32LE(at + 42);
    const name = bytes.toString('utf8', at + 46, at + 46 + nameLength);
    const start = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
    const data = bytes.subarray(start, start + compressedSize);
    parts.set(name, (method === 8 ? inflateRawSync(data) : data).toString('utf8'));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return parts;
}

/** Runs a Python snippet with openpyxl on a workbook; null when no Python has openpyxl. */
export function openpyxlPython(): string | null {
  for (const python of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(python, ['-c', 'import openpyxl'], { encoding: 'utf8' });
    if (probe.status === 0) return python;
  }
  return null;
}

export function runOpenpyxl(python: string, bytes: Buffer, script: string): unknown {
  const dir = mkdtempSync(join(tmpdir(), 'xlsx-py-'));
  try {
    writeFileSync(join(dir, 'book.xlsx'), bytes);
    const run = spawnSync(python, ['-c', `import json, sys, openpyxl\nwb = openpyxl.load_workbook(sys.argv[1])\n${script}`, join(dir, 'book.xlsx')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (run.status !== 0) throw new Error(`openpyxl failed: ${run.stderr}`);
    return JSON.parse(run.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
