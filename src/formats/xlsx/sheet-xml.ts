/**
 * Row and cell XML of a SpreadsheetML worksheet, built as one growing string that the
 * workbook flushes into the zip entry every `FLUSH_AT` characters or so.
 *
 * Strings are inline (`t="inlineStr"`), never shared: a shared-string table would have to
 * hold every distinct text of the sheet in memory until the end. Text is never a formula —
 * a formula lives in `<f>`, and we only ever write `<is><t>`, so `=HYPERLINK(…)` stays text.
 */
import { textCellTail } from '../../model/sheet-row.js';

export { MAX_CELL_TEXT } from '../../model/sheet-row.js';

/**
 * Pending XML worth encoding, in UTF-16 units. Turning the string of many small pieces into
 * bytes is a good part of the cost, and is cheaper in cache-sized runs (16k: ~12 % less than
 * 64k). Flushing often also keeps the pieces young for the garbage collector: a batch of
 * 30,000 Offers rows held as one string spent a third of the time in it.
 */
export const FLUSH_AT = 16 * 1024;

/** Excel's last column, XFD (Excel specifications and limits: 16,384 columns). */
export const MAX_COLUMNS = 16_384;

const COLUMN_LETTERS: string[] = [];

/** `0` → `A`, `25` → `Z`, `26` → `AA`. */
export function columnLetter(index: number): string {
  let letters = COLUMN_LETTERS[index];
  if (letters === undefined) {
    if (!Number.isInteger(index) || index < 0 || index >= MAX_COLUMNS) throw new RangeError(`column ${index} is beyond XFD`);
    letters = '';
    for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
    COLUMN_LETTERS[index] = letters;
  }
  return letters;
}

const ATTRIBUTE_ESCAPABLE = /[&<>"'\t\n\r]|[^\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ATTRIBUTE_ESCAPES: Record<string, string> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;',
};

/** Text for an attribute value (a sheet name). */
export function escapeXmlAttribute(text: string): string {
  return text.replace(ATTRIBUTE_ESCAPABLE, (match) => ATTRIBUTE_ESCAPES[match] ?? '');
}

const ELEMENT_ESCAPABLE = /[&<>]|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Element text other than a cell's (a defined name's range). */
export function escapeXmlText(text: string): string {
  return text.replace(ELEMENT_ESCAPABLE, (match) => ATTRIBUTE_ESCAPES[match] ?? '');
}

/** The fixed XML of a cell between its reference and its value, for one style. */
export interface CellOpenings {
  text: string;
  /** For text with leading or trailing white space, which Excel trims unless told not to. */
  textPreserved: string;
  number: string;
  boolean: string;
}

// Built once per style and column, so that a cell is a handful of concatenations.
const openings: CellOpenings[] = [];
export function openingsOf(style: number): CellOpenings {
  let found = openings[style];
  if (found === undefined) {
    const s = style === 0 ? '' : ` s="${style}"`;
    found = {
      text: `"${s} t="inlineStr"><is><t>`,
      textPreserved: `"${s} t="inlineStr"><is><t xml:space="preserve">`,
      number: `"${s}><v>`,
      boolean: `"${s} t="b"><v>`,
    };
    openings[style] = found;
  }
  return found;
}
const cellStarts: string[] = [];
const cellStart = (column: number): string => (cellStarts[column] ??= `<c r="${columnLetter(column)}`);

/** The end of a number or boolean cell. */
export const VALUE_CELL_CLOSE = '</v></c>';

/** Cells kept by `SheetRows.capture`: column, XML after the reference, column, …. */
export interface CapturedCells {
  readonly cells: readonly (number | string)[];
  /** The column after the last one the capture covered. */
  readonly end: number;
}

/**
 * The `<sheetData>` rows of one worksheet. Cells are written left to right; a skipped column
 * is an empty cell (no element). Every cell carries its reference: the format allows leaving
 * it out, but exceljs then cannot read the sheet and readers differ on cells after a gap.
 */
export class SheetRows {
  private xml = '';
  private row = 0;
  private rowRef = '';
  private column = 0;
  private widest = 0;
  private capturing: (number | string)[] | null = null;

  /** Rows written so far (the header included). */
  get rowCount(): number {
    return this.row;
  }

  /** Columns of the widest row written so far. */
  get columnCount(): number {
    return this.widest;
  }


  /** True when the writer should yield so that the pending XML goes out. */
  get full(): boolean {
    return this.xml.length >= FLUSH_AT;
  }

  /** Hands over the XML written since the last call. */
  take(): string {
    const xml = this.xml;
    this.xml = '';
    return xml;
  }

  startRow(): this {
    this.row += 1;
    this.rowRef = String(this.row);
    this.column = 0;
    this.xml += `<row r="${this.rowRef}">`;
    return this;
  }

  endRow(): void {
    this.xml += '</row>';
  }

  /**
   * Counts rows that went into the sheet as bytes of their own (a store's rows,
   * model/sheet-row.ts) after the ones written here: the last is row `lastRow`, none wider than
   * `columns`.
   */
  followedBy(lastRow: number, columns: number): void {
    this.row = lastRow;
    if (columns > this.widest) this.widest = columns;
  }

  /** Leaves `count` cells empty. */
  skip(count = 1): this {
    this.column += count;
    return this;
  }

  /** An inline string; empty text is an empty cell. */
  text(value: string, style = 0): this {
    if (value.length === 0) return this.skip();
    const open = openingsOf(style);
    return this.cell(textCellTail(value, open.text, open.textPreserved));
  }

  /** A number; NaN and ±Infinity, which a cell cannot hold, leave it empty. */
  number(value: number, style = 0): this {
    if (!Number.isFinite(value)) return this.skip();
    return this.cell(openingsOf(style).number + value + VALUE_CELL_CLOSE);
  }

  /**
   * A number given as its XML text, which the caller guarantees is a valid `xsd:double`
   * literal (`1990.50`): money formatted from cents this way is exact and cheaper than
   * printing a double.
   */
  numberText(text: string, style = 0): this {
    return this.cell(openingsOf(style).number + text + VALUE_CELL_CLOSE);
  }

  /** A TRUE/FALSE cell. */
  boolean(value: boolean, style = 0): this {
    return this.cell(openingsOf(style).boolean + (value ? '1' : '0') + VALUE_CELL_CLOSE);
  }

  /**
   * Writes the cells that `write` writes and keeps them, so that `repeat` can write the same
   * cells into later rows without building them again (Offers repeats a product's cells on
   * each of its competitors' rows).
   */
  capture(write: (rows: this) => void): CapturedCells {
    const cells: (number | string)[] = [];
    this.capturing = cells;
    try {
      write(this);
    } finally {
      this.capturing = null;
    }
    return { cells, end: this.column };
  }

  /** Writes captured cells into the current row, in the columns they were captured in. */
  repeat(captured: CapturedCells): this {
    const { cells } = captured;
    for (let i = 0; i < cells.length; i += 2) this.xml += cellStart(cells[i] as number) + this.rowRef + (cells[i + 1] as string);
    this.column = captured.end;
    if (this.column > this.widest) this.widest = this.column;
    return this;
  }

  /** `tail` is the cell's XML after its reference. */
  private cell(tail: string): this {
    this.xml += cellStart(this.column) + this.rowRef + tail;
    this.capturing?.push(this.column, tail);
    return this.advance();
  }

  private advance(): this {
    this.column += 1;
    if (this.column > this.widest) this.widest = this.column;
    return this;
  }
}
