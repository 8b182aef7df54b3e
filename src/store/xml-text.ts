/*
 * What both dialects' XML items (sqlite/xml-sql.ts, postgres/xml-sql.ts) do to a text value, as
 * the XML writer's escapeText does (formats/xml.ts): the characters XML 1.0 cannot carry are
 * dropped, then `&`, `<`, `>` and CR become references. A storage concern's copy of a format
 * rule, held to the writer by xml-records.contract.test.ts.
 */

/** C0 controls but tab, LF and CR (NUL excepted: no store holds it), U+FFFE, U+FFFF. */
export const XML_ILLEGAL: readonly string[] = [
  ...Array.from({ length: 0x1f }, (_, i) => String.fromCharCode(i + 1)).filter((c) => !'\t\n\r'.includes(c)),
  '\uFFFE',
  '\uFFFF',
];

/** The references, `&` first (the others bring an `&` of their own). */
export const XML_REFERENCES: readonly (readonly [string, string])[] = [
  ['&', '&amp;'],
  ['<', '&lt;'],
  ['>', '&gt;'],
  ['\r', '&#13;'],
];

/**
 * An attribute value's references (escapeAttribute in formats/xml.ts): the text's, then `"`, and
 * tab and LF, which a parser would read back as spaces.
 */
export const XML_ATTRIBUTE_REFERENCES: readonly (readonly [string, string])[] = [
  ...XML_REFERENCES,
  ['"', '&quot;'],
  ['\t', '&#9;'],
  ['\n', '&#10;'],
];
