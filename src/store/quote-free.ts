import { ITEM_FIELDS, type ItemField, type PriceItem } from '../model/price-item.js';
import { isPlainCellText, MAX_CELL_TEXT } from '../model/sheet-row.js';
import { STORED_FIELDS, type StoredField } from './stored-fields.js';
import { XML_ATTRIBUTE_REFERENCES, XML_ILLEGAL, XML_REFERENCES } from './xml-text.js';

/*
 * The `quote_free` column of price_items, in both dialects: bits an item's row records at
 * publication, each saying that one of its texts needs no work in one format (no CSV quoting
 * with a common delimiter, no XML or JSON escaping) or that it lacks one of the `extra` keys YML
 * reads.
 * The records the database builds (sqlite/*-sql.ts, postgres/*-sql.ts) test a bit instead of
 * scanning the text. Rows stored before the column, or before a bit, hold NULL or no such bit
 * there and take the scan: a bit is only ever a shortcut to what the scan would find.
 */

/** The bit of `field` among `fields`, whose bits start at `first`; undefined for another field. A power of two, not a shift: some are above bit 31. */
const bitAmong = (fields: readonly string[], first: number) => (field: string): number | undefined => {
  const at = fields.indexOf(field);
  return at < 0 ? undefined : 2 ** (first + at);
};

/** The stored text fields, in the order of their bits. */
export const TEXT_FIELDS = STORED_FIELDS.filter((field) => ITEM_FIELDS[field] === 'text');

/*
 * CSV (bits 0–15): for each text field and each of the delimiters most profiles use, whether
 * the value needs quoting. The scan was ~30 % of SQLite's CSV records.
 */
const COMMON_DELIMITERS = [',', ';', '\t', '|'] as const;
const ALWAYS_QUOTED = /["\r\n]|^ | $/;

export const isCommonDelimiter = (delimiter: string): boolean => (COMMON_DELIMITERS as readonly string[]).includes(delimiter);

/** The bit that says "this field needs no quoting with this (common) delimiter". */
export const quoteFreeBit = (field: StoredField, delimiter: string): number =>
  1 << (TEXT_FIELDS.indexOf(field) * COMMON_DELIMITERS.length + COMMON_DELIMITERS.indexOf(delimiter as (typeof COMMON_DELIMITERS)[number]));

/*
 * XML text (bits 16–19): which stored text fields XML text leaves as they are. SQLite's GLOB
 * over the ~30 characters of the class made its first XML slower than `sqlite3 -json` (0.63×);
 * PostgreSQL's regular expression was ~22 % of its XML records (bench/RESULTS.md).
 */
const needsWork = (references: readonly (readonly [string, string])[]) => new RegExp(`[${references.map(([c]) => c).join('')}${XML_ILLEGAL.join('')}]`);
const TEXT_WORK = needsWork(XML_REFERENCES);
const ATTRIBUTE_WORK = needsWork(XML_ATTRIBUTE_REFERENCES);
const FIRST_XML_BIT = 16;

/** The bit that says the stored text `field` needs no XML escaping; undefined for another field. */
export const xmlPlainBit = bitAmong(TEXT_FIELDS, FIRST_XML_BIT);

/*
 * YML (bits 20–26): what an offer leaves as it is: its `extra` texts (20–24), its attributes'
 * keys as attribute values and values as text (25), its offer_id as an attribute value (26).
 * Bits 27–32: which of the `extra` keys an offer reads the item does not have, so the offer
 * skips looking them up (on the bench's catalogue, where most items have few of these fields,
 * SQLite's json_extract calls were about a quarter of the offers' SQL).
 */
const EXTRA_TEXT_FIELDS = ['picture', 'vendor', 'vendor_code', 'barcode', 'description'] as const;
const FIRST_YML_BIT = 20;
/** The bit that says the item's `field` (an `extra` text) needs no XML escaping; undefined for another field. */
export const extraPlainBit = bitAmong(EXTRA_TEXT_FIELDS, FIRST_YML_BIT);
/** The bit that says a stored or `extra` text `field` needs no XML text escaping (the offers' texts). */
export const textPlainBit = (field: ItemField): number | undefined => xmlPlainBit(field) ?? extraPlainBit(field);
export const ATTRIBUTES_PLAIN_BIT = 1 << (FIRST_YML_BIT + EXTRA_TEXT_FIELDS.length);
export const OFFER_ID_PLAIN_BIT = ATTRIBUTES_PLAIN_BIT * 2;
const READ_EXTRA_FIELDS = [...EXTRA_TEXT_FIELDS, 'category'] as const;
/** The first bit after OFFER_ID_PLAIN_BIT's. */
const FIRST_ABSENT_BIT = Math.log2(OFFER_ID_PLAIN_BIT) + 1;
/** The bit that says the item has no `field` (one of the `extra` keys an offer reads). */
export const extraAbsentBit = bitAmong(READ_EXTRA_FIELDS, FIRST_ABSENT_BIT);

const EXTRA_TEXTS = EXTRA_TEXT_FIELDS.map((field) => ({ field, bit: extraPlainBit(field)! }));
const READ_EXTRAS = READ_EXTRA_FIELDS.map((field) => ({ field, absentBit: extraAbsentBit(field)! }));

function plainAttributes(attributes: Readonly<Record<string, string>>): boolean {
  for (const key in attributes) if (ATTRIBUTE_WORK.test(key) || TEXT_WORK.test(attributes[key])) return false;
  return true;
}

/** The YML bits. The absent bits are above 32 bits: they are added, never `|`-ed (which would cut the number to 32 bits). */
function ymlMask(item: PriceItem): number {
  let mask = 0;
  for (const { field, bit } of EXTRA_TEXTS) {
    const value = item[field];
    if (value === null || !TEXT_WORK.test(value)) mask |= bit;
  }
  if (item.attributes === null || plainAttributes(item.attributes)) mask |= ATTRIBUTES_PLAIN_BIT;
  if (!ATTRIBUTE_WORK.test(item.offer_id)) mask |= OFFER_ID_PLAIN_BIT;
  let absent = 0;
  for (const { field, absentBit } of READ_EXTRAS) if (item[field] === null) absent += absentBit;
  return mask + absent;
}

/*
 * JSON (bits 33–36): which stored text fields, not null, JSON.stringify leaves as they are
 * between its quotes (no `"`, `\`, or control character), so the record wraps them in quotes
 * instead of calling PostgreSQL's to_json (~25 % of its JSON records, bench/RESULTS.md).
 */
const FIRST_JSON_BIT = FIRST_ABSENT_BIT + READ_EXTRA_FIELDS.length;
const JSON_WORK = /["\\\u0000-\u001f]/;
/** The bit that says the stored text `field` is not null and needs no JSON escaping; undefined for another field. */
export const jsonPlainBit = bitAmong(TEXT_FIELDS, FIRST_JSON_BIT);

/*
 * XLSX (bits 37–40): which stored text fields, not null, a sheet cell holds as they are
 * (isPlainCellText: not empty, nothing to escape, no white space at either end, not too long),
 * so SQLite's sheet rows (sqlite/sheet-row-sql.ts) write them without calling back into
 * JavaScript for the cell's text.
 */
const FIRST_CELL_BIT = FIRST_JSON_BIT + TEXT_FIELDS.length;
/** The bit that says the stored text `field` is not null and a cell holds it as it is; undefined for another field. */
export const cellPlainBit = bitAmong(TEXT_FIELDS, FIRST_CELL_BIT);

/**
 * A stored text with none of these characters needs no quoting with any common delimiter and no
 * XML or JSON escaping: most texts are such, and take one test instead of ten (PostgreSQL's
 * publication works the bits out on its main thread; bench/RESULTS.md).
 */
const ANY_WORK = new RegExp(`[${COMMON_DELIMITERS.join('')}"\\\\\r\n${XML_REFERENCES.map(([c]) => c).join('')}${XML_ILLEGAL.join('')}]|^ | $`);

/** Per stored text field, its CSV and XML bits (below bit 20: `|` reads them) and its JSON bit, worked out once. */
const STORED_TEXTS = TEXT_FIELDS.map((field) => ({
  field,
  allBits: COMMON_DELIMITERS.reduce((bits, delimiter) => bits | quoteFreeBit(field, delimiter), xmlPlainBit(field)!),
  xmlBit: xmlPlainBit(field)!,
  jsonBit: jsonPlainBit(field)!,
  cellBit: cellPlainBit(field)!,
}));

/** The CSV, XML, JSON and XLSX bits of the stored texts; the JSON and XLSX bits are added, being above 32 bits. */
function storedTextMask(item: Pick<PriceItem, StoredField>): number {
  let mask = 0;
  let high = 0;
  for (const { field, allBits, xmlBit, jsonBit, cellBit } of STORED_TEXTS) {
    const value = item[field] as string | null;
    if (value === null) {
      mask |= allBits;
    } else if (!ANY_WORK.test(value)) {
      mask |= allBits;
      high += jsonBit;
      // Without ANY_WORK's characters, only its length or an `_xHHHH_` keeps a text out of a cell as it is.
      if (value.length > 0 && value.length <= MAX_CELL_TEXT && (!value.includes('_x') || isPlainCellText(value))) high += cellBit;
    } else {
      const quotedAnyway = ALWAYS_QUOTED.test(value);
      for (const delimiter of COMMON_DELIMITERS) if (!quotedAnyway && !value.includes(delimiter)) mask |= quoteFreeBit(field, delimiter);
      if (!TEXT_WORK.test(value)) mask |= xmlBit;
      if (!JSON_WORK.test(value)) high += jsonBit;
      if (isPlainCellText(value)) high += cellBit;
    }
  }
  return mask + high;
}

/** An item's `quote_free` value (41 bits: an INTEGER in SQLite, a bigint in PostgreSQL). */
export function quoteFree(item: PriceItem): number {
  // The masks' bits are apart, some above 32 bits: they are added, since `|` would cut them off.
  return storedTextMask(item) + ymlMask(item);
}
