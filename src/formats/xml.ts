import type { CellValue, ExportColumn } from '../model/columns.js';
import { formatMoney } from '../model/money.js';
import { isItemField, ITEM_FIELDS, type PriceItem, type ValueKind } from '../model/price-item.js';
import type { XmlRecordPart, XmlRecordSpec } from '../model/xml-record.js';
import { NO_ITEM, renderBuiltRecords, renderText, UTF8_NO_BOM, type TextLayout } from './text-writer.js';
import type { ExportMeta, RecordSourceWriter } from '../model/export-writer.js';

/*
 * XML, CONTRACT §6: <price_list store version published_at><item>…</item></price_list>.
 * The escaping helpers are shared with the YML writer.
 *
 * The same items can be built by the store next to the rows (model/xml-record.ts), which the
 * export takes when every column is a stored field or a constant; this JavaScript layout is
 * the reference and the fallback.
 */

export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

/*
 * Characters XML 1.0 cannot carry at all, not even as a character reference: C0 controls
 * other than tab, LF and CR, U+FFFE/U+FFFF and unpaired surrogates (in a `u` regex a
 * surrogate range matches only unpaired ones). They are dropped, not replaced: they come
 * from copy-paste (a vertical tab out of an Excel cell) and are invisible in the source,
 * while a U+FFFD in a product name would show on the marketplace's page.
 */
const TEXT_SPECIAL = /[&<>\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF\uD800-\uDFFF]/u;
const TEXT_SPECIAL_ALL = new RegExp(TEXT_SPECIAL.source, 'gu');
const ATTRIBUTE_SPECIAL = /[&<>"\t\n\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF\uD800-\uDFFF]/u;
const ATTRIBUTE_SPECIAL_ALL = new RegExp(ATTRIBUTE_SPECIAL.source, 'gu');

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  // A parser turns a literal CR into LF (and tab/LF in an attribute into a space); the
  // references keep the value as it was published.
  '\r': '&#13;',
  '\n': '&#10;',
  '\t': '&#9;',
};
const entity = (char: string): string => ENTITIES[char] ?? '';

/** Text content: `&`, `<`, `>` escaped (`>` too, for `]]>`), CR kept as `&#13;`, illegal characters dropped. */
export const escapeText = (text: string): string => (TEXT_SPECIAL.test(text) ? text.replace(TEXT_SPECIAL_ALL, entity) : text);

/** An attribute value in double quotes: as text, plus `"`, tab and LF as references. */
export const escapeAttribute = (text: string): string =>
  ATTRIBUTE_SPECIAL.test(text) ? text.replace(ATTRIBUTE_SPECIAL_ALL, entity) : text;

// XML 1.0 (5th ed.) NameStartChar and NameChar, without `:`: a colon would read as an
// undeclared namespace prefix.
const NAME_START = /[A-Z_a-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\u{10000}-\u{EFFFF}]/u;
const NAME_CHAR = new RegExp(`${NAME_START.source.slice(0, -1)}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F\\u2040]`, 'u');

/**
 * A column key as an element name: every character that cannot stand in an XML name becomes
 * `_`, and a name that cannot start with its first character (a digit, `-`, `.`) gets a `_`
 * in front: `1c code` → `_1c_code`, `price (RUB)` → `price__RUB_`.
 */
export function xmlName(key: string): string {
  let name = '';
  for (const char of key) name += NAME_CHAR.test(char) ? char : '_';
  if (name === '') return '_';
  return NAME_START.test(String.fromCodePoint(name.codePointAt(0)!)) ? name : `_${name}`;
}

/** A cell as XML text: money with `.` and two decimals, booleans `true`/`false`; null for absent. */
export function xmlValue(kind: ValueKind, value: CellValue): string | null {
  if (value === null) return null;
  switch (kind) {
    case 'money':
      return formatMoney(value as number);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'integer':
      return String(value);
    case 'text':
      return escapeText(String(value));
  }
}

function elementFor(column: ExportColumn): (item: Parameters<ExportColumn['get']>[0]) => string {
  const name = xmlName(column.key);
  const open = `<${name}>`;
  const close = `</${name}>`;
  const empty = `<${name}/>`;
  const { kind, get } = column;
  return (item) => {
    const text = xmlValue(kind, get(item));
    return text === null ? empty : open + text + close;
  };
}

export function xmlItemLayout(meta: ExportMeta): TextLayout {
  const elements = meta.columns.map(elementFor);
  const { store, priceList } = meta;
  return {
    header:
      XML_DECLARATION +
      `<price_list store="${escapeAttribute(store.id)}" version="${priceList.version}"` +
      ` published_at="${priceList.publishedAt.toISOString()}">\n`,
    row(item) {
      let text = '<item>';
      for (const element of elements) text += element(item);
      return text + '</item>\n';
    },
    footer: '</price_list>\n',
  };
}

/**
 * The items as a spec a store may build itself: the layout's row with `<item>`, its end and the
 * constants' elements as literal parts; null when a column reads what a spec cannot name (an
 * attribute). Which fields the store holds is its to say.
 */
export function xmlRecordSpec(columns: readonly ExportColumn[]): XmlRecordSpec | null {
  const parts: XmlRecordPart[] = [];
  // Literal text is gathered until the next field, so a row of constants is one part.
  let literal = '<item>';
  for (const column of columns) {
    if (column.field === null) {
      literal += elementFor(column)(NO_ITEM);
    } else if (isItemField(column.field) && column.kind === ITEM_FIELDS[column.field]) {
      parts.push({ kind: 'literal', text: literal }, { kind: column.kind, field: column.field, element: xmlName(column.key) });
      literal = '';
    } else {
      return null;
    }
  }
  parts.push({ kind: 'literal', text: literal + '</item>\n' });
  return { format: 'xml', parts };
}

export const xmlWriter: RecordSourceWriter = {
  format: 'xml',
  extension: 'xml',
  needs: { fields: 'columns', categories: false },
  takesRecordSource: true,
  contentType: () => 'application/xml; charset=utf-8',
  render(batches, meta, records) {
    const layout = xmlItemLayout(meta);
    const spec = records ? xmlRecordSpec(meta.columns) : null;
    const built = records && spec ? records(spec) : null;
    if (built) return renderBuiltRecords(layout.header, built, layout.footer);
    return renderText(batches, layout, UTF8_NO_BOM);
  },
};
