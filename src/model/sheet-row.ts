import { escapeFormula } from './formula-escape.js';
import type { ItemField } from './price-item.js';

/*
 * A data row of the XLSX writer's Prices sheet (a SpreadsheetML `<row>`) described as data, so
 * that a store can build the rows next to the items, as it builds XML items
 * (model/xml-record.ts): turning 100k rows into objects and then into sheet XML on the main
 * thread held the first XLSX near 2× libxlsxwriter (issue #18), where the issue asks for more.
 *
 * The XLSX writer (formats/xlsx/prices-writer.ts) owns the format and makes this description;
 * its JavaScript rows are the reference, and a store that renders it must give the same bytes
 * (store/sheet-rows.contract.test.ts). The text cell's rule lives here, once, for both: the
 * writer's cells and a store's rows of texts that need work call `textCellTail`.
 */

/** Excel refuses a cell longer than this (Excel specifications and limits: 32,767 characters). */
export const MAX_CELL_TEXT = 32_767;

/**
 * One cell of a row. Its XML is `<c r="` + `column` + the row's number + its tail, and no XML at
 * all when the value is null (or, for text, empty):
 * - `text`: textCellTail(value, `open`, `openPreserved`), the value first escaped as a formula when
 *   the spec says so;
 * - `money`: `open`, the minor units as units, `.`, two digits (199050 → `1990.50`), `close`;
 * - `integer`: `open`, decimal digits, `close`; `boolean`: `open`, `1` or `0`, `close`;
 * - `literal`: `tail` as it is (a profile's constant, already a cell).
 */
export type SheetRowCell =
  | { kind: 'text'; field: ItemField; column: string; open: string; openPreserved: string }
  | { kind: 'money' | 'integer' | 'boolean'; field: ItemField; column: string; open: string; close: string }
  | { kind: 'literal'; column: string; tail: string };

export interface SheetRowSpec {
  format: 'sheet-row';
  /**
   * The first item's row number; the items that follow take the next numbers, in publication
   * order (the ones a filter leaves out take none). A row is `<row r="N">`, its cells, `</row>`.
   */
  firstRow: number;
  cells: readonly SheetRowCell[];
  /** A profile's `escape_formulas`: text cells go through escapeFormula first (CONTRACT §14). */
  escapeFormulas: boolean;
}

/** The end of every text cell. */
export const TEXT_CELL_CLOSE = '</t></is></c>';

// Anything that is not plain text for XML: markup characters, CR (an XML parser turns a raw CR
// into LF, so it goes out as a character reference), characters XML 1.0 forbids (C0 controls,
// lone surrogates, U+FFFE/U+FFFF), and `_xHHHH_`, which Excel reads as an escaped character
// (ECMA-376 ST_Xstring) unless its underscore is itself escaped as `_x005F_`.
const NEEDS_ESCAPING = /[&<>\r\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]|_x[0-9A-Fa-f]{4}_/;
const ESCAPABLE = /[&<>\r]|_(?=x[0-9A-Fa-f]{4}_)|[^\t\n\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#13;', _: '_x005F_' };
const replaceEscapable = (match: string): string => ESCAPES[match] ?? '';
/** NEEDS_ESCAPING read by code point: a surrogate pair is one character, only a lone half needs work. */
const NEEDS_WORK = new RegExp(NEEDS_ESCAPING.source, 'u');

/** Text for a cell: markup escaped, CR kept, characters illegal in XML dropped. */
export function escapeCellText(text: string): string {
  return NEEDS_ESCAPING.test(text) ? text.replace(ESCAPABLE, replaceEscapable) : text;
}

/** Whether a cell's text needs no work at all: nothing to escape, no white space at either end, not too long. */
export function isPlainCellText(text: string): boolean {
  return text.length > 0 && text.length <= MAX_CELL_TEXT && text.charCodeAt(0) > 32 && text.charCodeAt(text.length - 1) > 32 && !NEEDS_WORK.test(text);
}

/** Cuts text to what a cell holds, without splitting a surrogate pair. */
function fitCell(text: string): string {
  if (text.length <= MAX_CELL_TEXT) return text;
  const lastUnit = text.charCodeAt(MAX_CELL_TEXT - 1);
  const end = lastUnit >= 0xd800 && lastUnit <= 0xdbff ? MAX_CELL_TEXT - 1 : MAX_CELL_TEXT;
  return text.slice(0, end);
}

/**
 * A text cell's XML after its reference, for a value that is not empty: cut to what a cell holds,
 * escaped, and opened with `openPreserved` when it starts or ends with white space, which Excel
 * trims unless told not to.
 */
export function textCellTail(value: string, open: string, openPreserved: string): string {
  const text = escapeCellText(fitCell(value));
  const edgeSpace = text.charCodeAt(0) <= 32 || text.charCodeAt(text.length - 1) <= 32;
  return (edgeSpace ? openPreserved : open) + text + TEXT_CELL_CLOSE;
}

/** textCellTail of the value as a cell of a spec shows it (formula-escaped when the spec says so). */
export const specTextCellTail = (value: string, open: string, openPreserved: string, escapeFormulas: boolean): string =>
  textCellTail(escapeFormulas ? escapeFormula(value) : value, open, openPreserved);
