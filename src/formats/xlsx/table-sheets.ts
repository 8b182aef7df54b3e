/**
 * A table written as one sheet — or, when it has more rows than a sheet holds, continued on
 * `Name (2)`, `Name (3)`, … with the header repeated, instead of a file that Excel cannot
 * load completely. The Offers sheet of 100,000 products × 30 competitors is 3,000,000 rows.
 */
import { writeHeaderRow } from './export-cells.js';
import type { SheetRows } from './sheet-xml.js';
import type { SheetSpec } from './workbook.js';

/** Excel's last row (Excel specifications and limits: 1,048,576 rows); LibreOffice's too by default. */
export const MAX_ROWS = 1_048_576;

export interface TableOptions<T> extends Pick<SheetSpec, 'columnWidths' | 'freeze' | 'autoFilter'> {
  name: string;
  header: readonly string[];
  /** Data rows to expect, which decides the number of sheets; should it fall short, the last sheet takes the rest. */
  expectedRows: number;
  /** The rows' sources in order, in batches; called once, when the first sheet starts. */
  batches: () => AsyncIterable<readonly T[]>;
  writeRow(rows: SheetRows, row: T): void;
  /** Data rows per sheet; Excel's limit less the header unless a test says otherwise. */
  rowsPerSheet?: number;
}

/** The sheets of the table; they share one pass over `batches`, each taking up where the last stopped. */
export function tableSheets<T>(options: TableOptions<T>): SheetSpec[] {
  const perSheet = options.rowsPerSheet ?? MAX_ROWS - 1;
  const count = Math.max(1, Math.ceil(options.expectedRows / perSheet));
  let source: AsyncIterator<readonly T[]> | null = null;
  let batch: readonly T[] = [];
  let index = 0;
  let exhausted = false;

  /** Moves to the next row, reading a batch if need be; false at the end. */
  async function hasRow(): Promise<boolean> {
    while (index >= batch.length) {
      if (exhausted) return false;
      source ??= options.batches()[Symbol.asyncIterator]();
      const next = await source.next();
      if (next.done) {
        exhausted = true;
        return false;
      }
      batch = next.value;
      index = 0;
    }
    return true;
  }

  /** Ends the source early (a database cursor closes); idempotent. */
  async function release(): Promise<void> {
    if (exhausted) return;
    exhausted = true;
    await source?.return?.();
  }

  return Array.from({ length: count }, (_, part): SheetSpec => ({
    name: part === 0 ? options.name : `${options.name} (${part + 1})`,
    columnWidths: options.columnWidths,
    freeze: options.freeze,
    autoFilter: options.autoFilter,
    // Between two sheets the source is open and no sheet is reading it.
    close: release,
    async *write(rows: SheetRows) {
      writeHeaderRow(rows, options.header);
      let room = part === count - 1 ? Infinity : perSheet;
      let handedOn = false;
      try {
        while (room > 0 && (await hasRow())) {
          const end = Math.min(batch.length, index + room);
          room -= end - index;
          while (index < end) {
            options.writeRow(rows, batch[index++]!);
            if (rows.full) yield;
          }
          yield;
        }
        handedOn = part < count - 1;
      } finally {
        // Stopped early (the client went away) or done: release the source. Handing on to
        // the next sheet keeps it open.
        if (!handedOn) await release();
      }
    },
  }));
}
