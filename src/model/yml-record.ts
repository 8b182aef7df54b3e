import type { ItemField } from './price-item.js';

/*
 * A YML `<offer>` described as data, so that a store can build the offers next to the rows, as
 * it builds JSON and XML items (model/json-record.ts, model/xml-record.ts). The YML writer
 * (formats/yml.ts) owns the format and makes this description; its JavaScript layout is the
 * reference, and a store that renders it must give the same bytes
 * (store/yml-records.contract.test.ts, on every dialect).
 *
 * Unlike a JSON or XML item, an offer reads fields a store may keep outside its columns (vendor,
 * picture, category, attributes…): naming a field is the writer's part, reading it the store's.
 */

/** Text escaped as the XML writer's escapeText does: `&`, `<`, `>` as entities, CR as `&#13;`, the characters XML 1.0 cannot carry dropped. */
type Escaped = string;

/**
 * One part of an offer, as the YML writer prints it:
 * - `literal`: this exact text (`<offer id="`, `</offer>\n`, a profile's constant param);
 * - `attribute`: the field's text as an attribute value (escaped text, plus `"`, tab and LF as
 *   `&quot;`, `&#9;`, `&#10;`); never null;
 * - `boolean`: `true` or `false`; never null;
 * - `text` / `money` / `integer` element: `<element>value</element>\n` with the value as escaped
 *   text, minor units with `.` and two digits, or decimal digits; nothing when null, nor (with
 *   `above`) when the value is not greater than that field's (oldprice, CONTRACT §6.1);
 *   `spelled`: values written otherwise, already escaped (`RUB` → `RUR`);
 * - `category`: `<element>id</element>\n`, the id of the field's path in `ids` (null reads as
 *   ''), else `otherwise`;
 * - `attributes`: `<param name="key">value</param>\n` for each of the item's attributes, in
 *   their stored order, the key escaped as an attribute value and the value as text;
 * - `param`: `<param name="name">value</param>\n` (`name` already escaped) of a text or money
 *   field, or of one attribute (`attribute` names its key); nothing when null or ''.
 */
export type YmlRecordPart =
  | { kind: 'literal'; text: string }
  | { kind: 'attribute' | 'boolean'; field: ItemField }
  | { kind: 'text'; field: ItemField; element: string; spelled?: Readonly<Record<string, Escaped>> }
  | { kind: 'money'; field: ItemField; element: string; above?: ItemField }
  | { kind: 'integer'; field: ItemField; element: string }
  | { kind: 'category'; field: ItemField; element: string; ids: Readonly<Record<string, number>>; otherwise: number }
  | { kind: 'attributes' }
  | { kind: 'param'; name: Escaped; field: ItemField; value: 'text' | 'money' }
  | { kind: 'param'; name: Escaped; attribute: string; value: 'text' };

export interface YmlRecordSpec {
  format: 'yml';
  /** Each offer is the concatenation of its parts. */
  parts: readonly YmlRecordPart[];
}
