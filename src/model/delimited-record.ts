import type { ItemField } from './price-item.js';

/*
 * A CSV/TSV record described as data rather than code, so that a store can build the records
 * next to the rows (SQLite: one blob per page, on its page threads; PostgreSQL: in its own
 * process) instead of handing every row to JavaScript first. Reading the rows into JavaScript
 * alone is slower than the "first CSV ≥ 3× csv-stringify" goal (bench/RESULTS.md, "First
 * (uncached) CSV"); building the records in SQLite is not.
 *
 * The CSV writer (formats/delimited.ts) owns the format: it makes this description, and its
 * JavaScript layout is the reference; a store that renders it must give the same bytes
 * (store/delimited-records.contract.test.ts checks both against each other and against the
 * golden files, on every dialect).
 */

/**
 * One field of the record:
 * - `text`: empty when null; otherwise quoted (`"…"`, inner `"` doubled) when it holds the
 *   delimiter, `"`, CR or LF, or starts or ends with a space;
 * - `money`: minor units as `units<decimal separator>two digits`, empty when null;
 * - `integer`: decimal digits, empty when null; `boolean`: `1` or `0`, empty when null;
 * - `literal`: this exact text (a profile's constant, already quoted by the writer).
 */
export type RecordField =
  | { kind: 'text' | 'money' | 'integer' | 'boolean'; field: ItemField }
  | { kind: 'literal'; text: string };

export interface DelimitedRecordSpec {
  format: 'delimited';
  fields: readonly RecordField[];
  /** One character other than `"`, CR or LF (profiles are validated so). */
  delimiter: string;
  /** Never equal to the delimiter (the writer renders such a spec itself). */
  decimalSeparator: '.' | ',';
  /** After every record. */
  recordEnd: string;
}
