import { specTextCellTail, TEXT_CELL_CLOSE, type SheetRowCell, type SheetRowSpec } from '../../model/sheet-row.js';
import { FORMULA_STARTS_SQL } from '../formula-starts-sql.js';
import { cellPlainBit } from '../quote-free.js';
import { isStoredField, REQUIRED_FIELDS } from '../stored-fields.js';
import { sqlConcat } from '../sql-concat.js';
import { literal } from './sql-literal.js';
import { pgMoneyText } from './money-sql.js';

/*
 * A SheetRowSpec compiled to one PostgreSQL expression per item (the SQLite twin is
 * sqlite/sheet-row-sql.ts), over a price_items row and its `sheet_row`, the row's number
 * (items.ts works it out). The spec's texts are literals (delimited-sql.ts).
 *
 * A text cell whose `quote_free` bit says it needs no work is its column between the spec's
 * texts. Any other text (one to escape, cut at 32,767 UTF-16 units or mark as white-space
 * preserving, or a row stored before the bit) leaves the server as a marker, U+0001, the cell's
 * index, U+0002, the text's UTF-8 as hex, U+0003, and fillTextCells makes its cell here with
 * the writer's own rule (model/sheet-row.ts): Excel's `_xHHHH_` and a cut that never splits a
 * surrogate pair have no short SQL form. No other byte of a row can be U+0001: every other text
 * in it is escaped XML, where that character cannot be.
 */

const MARK = { start: 0x01, text: 0x02, end: 0x03 } as const;

function textCell(cell: Extract<SheetRowCell, { kind: 'text' }>, index: number, escapeFormulas: boolean): string {
  const c = cell.field;
  const reference = literal(`<c r="${cell.column}`);
  const plain = `(quote_free & ${cellPlainBit(c)}) <> 0${escapeFormulas ? ` AND left(${c}, 1) NOT IN ${FORMULA_STARTS_SQL}` : ''}`;
  return (
    `CASE WHEN ${plain} THEN concat(${reference}, sheet_row, ${literal(cell.open)}, ${c}, ${literal(TEXT_CELL_CLOSE)}) ` +
    `WHEN ${c} IS NULL OR ${c} = '' THEN NULL ` +
    `ELSE concat(${reference}, sheet_row, chr(${MARK.start}), '${index}', chr(${MARK.text}), encode(convert_to(${c}, 'UTF8'), 'hex'), chr(${MARK.end})) END`
  );
}

/** A number or boolean cell's value as text. */
function valueOf(kind: 'money' | 'integer' | 'boolean', column: string): string {
  switch (kind) {
    case 'money':
      return pgMoneyText(column);
    case 'integer':
      return `${column}::text`;
    case 'boolean':
      return `CASE WHEN ${column} THEN '1' ELSE '0' END`;
  }
}

export function compilePgSheetRow(spec: SheetRowSpec): string {
  const parts: string[] = [literal('<row r="'), 'sheet_row', literal('">')];
  spec.cells.forEach((cell, index) => {
    if (cell.kind === 'literal') {
      parts.push(literal(`<c r="${cell.column}`), 'sheet_row', literal(cell.tail));
      return;
    }
    if (!isStoredField(cell.field)) throw new Error(`${cell.field} is no column (check canBuildRecords first)`);
    if (cell.kind === 'text') {
      parts.push(textCell(cell, index, spec.escapeFormulas));
      return;
    }
    const whole = [literal(`<c r="${cell.column}`), 'sheet_row', literal(cell.open), valueOf(cell.kind, cell.field), literal(cell.close)];
    // A field every item has needs no null case.
    if (REQUIRED_FIELDS.has(cell.field)) parts.push(...whole);
    else parts.push(`CASE WHEN ${cell.field} IS NULL THEN NULL ELSE ${sqlConcat(whole)} END`);
  });
  parts.push(literal('</row>'));
  return sqlConcat(parts);
}

/** A page of rows with every marked text made into its cell (the server marks the texts that need work). */
export function fillTextCells(page: Buffer, spec: SheetRowSpec): Buffer {
  let start = page.indexOf(MARK.start);
  if (start < 0) return page;
  const pieces: Buffer[] = [];
  let done = 0;
  while (start >= 0) {
    const text = page.indexOf(MARK.text, start);
    const end = page.indexOf(MARK.end, text);
    const cell = spec.cells[Number(page.toString('latin1', start + 1, text))];
    if (text < 0 || end < 0 || cell?.kind !== 'text') throw new Error('a marked text cell of the sheet rows is malformed');
    const value = Buffer.from(page.toString('latin1', text + 1, end), 'hex').toString('utf8');
    pieces.push(page.subarray(done, start), Buffer.from(specTextCellTail(value, cell.open, cell.openPreserved, spec.escapeFormulas), 'utf8'));
    done = end + 1;
    start = page.indexOf(MARK.start, done);
  }
  pieces.push(page.subarray(done));
  return Buffer.concat(pieces);
}
