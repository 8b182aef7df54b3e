import type { ItemField } from './price-item.js';

/*
 * A JSON item described as data, so that a store can build the items next to the rows, as it
 * builds CSV records (model/delimited-record.ts): reading 100k rows into JavaScript objects to
 * print them again cost the first JSON export more than the whole `sqlite3 -json` dump of the
 * same rows (issue #18).
 *
 * The JSON writer (formats/json.ts) owns the format and makes this description; its JavaScript
 * layout is the reference, and a store that renders it must give the same bytes
 * (store/json-records.contract.test.ts, on every dialect).
 */

/**
 * One part of an item, as the JSON writer prints it:
 * - `text`: `null` when null, else JSON.stringify of the text;
 * - `money`: `null` when null, else the minor units as String(units / 100) prints them
 *   (199050 → `1990.5`, 100 → `1`, 5 → `0.05`);
 * - `integer`: decimal digits, `null` when null; `boolean`: `true` or `false`, `null` when null;
 * - `literal`: this exact text (`"key":` prefixes, a profile's constant already as JSON).
 */
export type JsonRecordPart =
  | { kind: 'text' | 'money' | 'integer' | 'boolean'; field: ItemField }
  | { kind: 'literal'; text: string };

export interface JsonRecordSpec {
  format: 'json';
  /**
   * Each item is the concatenation of its parts. The writer starts every item with `,\n` and
   * drops the very first byte of the output (the comma before the first item), so a store need
   * not know which item is first.
   */
  parts: readonly JsonRecordPart[];
}
