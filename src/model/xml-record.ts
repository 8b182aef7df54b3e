import type { ItemField } from './price-item.js';

/*
 * An XML `<item>` described as data, so that a store can build the items next to the rows, as
 * it builds JSON items (model/json-record.ts). The XML writer (formats/xml.ts) owns the format
 * and makes this description; its JavaScript layout is the reference, and a store that renders
 * it must give the same bytes (store/xml-records.contract.test.ts, on every dialect).
 */

/**
 * One part of an item, as the XML writer prints it:
 * - a field: `<element/>` when null, else `<element>value</element>` with the value as
 *   `text` (`&`, `<`, `>` as entities, CR as `&#13;`, the characters XML 1.0 cannot carry —
 *   C0 controls but tab, LF and CR, U+FFFE, U+FFFF — dropped), `money` (units, `.`, two
 *   digits), `integer` (decimal digits) or `boolean` (`true`, `false`);
 * - `literal`: this exact text (`<item>`, a profile's constant already as an element).
 */
export type XmlRecordPart =
  | { kind: 'text' | 'money' | 'integer' | 'boolean'; field: ItemField; element: string }
  | { kind: 'literal'; text: string };

export interface XmlRecordSpec {
  format: 'xml';
  /** Each item is the concatenation of its parts. */
  parts: readonly XmlRecordPart[];
}
