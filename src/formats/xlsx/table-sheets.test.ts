import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { tableSheets, type TableOptions } from './table-sheets.js';
import { renderWorkbook } from './workbook.js';
import { collect, inBatches, loadWorkbook, sheetValues, unzip } from '../../../test/support/workbooks.js';

const numbers = (count: number): number[] => Array.from({ length: count }, (_, i) => i + 1);

function table(rows: readonly number[], overrides: Partial<TableOptions<number>> = {}): TableOptions<number> {
  return {
    name: 'T',
    header: ['n', 'square'],
    expectedRows: rows.length,
    batches: () => inBatches(rows, 2),
    writeRow: (sheet, n) => sheet.startRow().number(n).number(n * n).endRow(),
    freeze: { rows: 1, columns: 0 },
    autoFilter: true,
    rowsPerSheet: 3,
    ...overrides,
  };
}

const render = (options: TableOptions<number>) => collect(renderWorkbook(tableSheets(options), { modified: new Date(0) }));

describe('tableSheets', () => {
  it('continues a long table on numbered sheets, header repeated, rows in order', async () => {
    const bytes = await render(table(numbers(7)));
    const workbook = await loadWorkbook(bytes);
    assert.deepEqual(workbook.worksheets.map((sheet) => sheet.name), ['T', 'T (2)', 'T (3)']);
    assert.deepEqual(workbook.worksheets.map((sheet) => sheetValues(sheet)), [
      [['n', 'square'], [1, 1], [2, 4], [3, 9]],
      [['n', 'square'], [4, 16], [5, 25], [6, 36]],
      [['n', 'square'], [7, 49]],
    ]);
    assert.deepEqual(workbook.worksheets.map((sheet) => sheet.autoFilter), ['A1:B4', 'A1:B4', 'A1:B2']);
    const workbookXml = unzip(bytes).get('xl/workbook.xml')!;
    assert.match(workbookXml, /localSheetId="2" hidden="1">'T \(3\)'!\$A\$1:\$B\$2</);
  });

  it('keeps a table that fits on one sheet', async () => {
    const workbook = await loadWorkbook(await render(table(numbers(3))));
    assert.deepEqual(workbook.worksheets.map((sheet) => sheet.name), ['T']);
  });

  it('puts rows beyond the expected count on the last sheet rather than lose them', async () => {
    const workbook = await loadWorkbook(await render(table(numbers(7), { expectedRows: 2 })));
    assert.deepEqual(workbook.worksheets.map((sheet) => sheet.name), ['T']);
    assert.equal(sheetValues(workbook.worksheets[0]!).length, 8);
  });

  it('reads the source once across the sheets, and releases it when the consumer stops', async () => {
    let reads = 0;
    let closed = false;
    const rows = numbers(5000);
    async function* source(): AsyncGenerator<readonly number[]> {
      reads += 1;
      try {
        yield* inBatches(rows, 10);
      } finally {
        closed = true;
      }
    }
    await render(table(rows, { batches: source, rowsPerSheet: 1000 }));
    assert.equal(reads, 1);
    assert.ok(closed, 'closed at the end');

    closed = false;
    let chunks = 0;
    for await (const _ of renderWorkbook(tableSheets(table(rows, { batches: source, rowsPerSheet: 1000 })), { modified: new Date(0) })) {
      if (++chunks === 8) break;
    }
    for (let i = 0; i < 50 && !closed; i++) await tick();
    assert.ok(closed, 'closed when the consumer stopped');
  });
});
