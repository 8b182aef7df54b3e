import type Database from 'better-sqlite3';
import { specTextCellTail, TEXT_CELL_CLOSE, type SheetRowCell, type SheetRowSpec } from '../../model/sheet-row.js';
import { FORMULA_STARTS_SQL } from '../formula-starts-sql.js';
import { cellPlainBit } from '../quote-free.js';
import { isStoredField, REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';
import { ConcatArgs } from './concat-args.js';
import type { CompiledRecord } from './delimited-sql.js';

/*
 * A SheetRowSpec compiled to one SQLite expression per item, over a price_items row and its
 * `sheet_row` (the row's number, which the page query works out: sqlite/items.ts). The spec's
 * texts are bound parameters, never part of the SQL text.
 *
 * A text cell whose `quote_free` bit (quote-free.ts) says it needs no work is its column between
 * the spec's texts. Any other text (one to escape, cut or mark as white-space preserving, or a
 * row stored before the bit) calls TEXT_CELL_FUNCTION, the JavaScript rule the writer's own cells
 * use (model/sheet-row.ts): Excel's `_xHHHH_` escape has no SQL form short of a character loop,
 * and such texts are few (none among the bench's 100k items).
 */

/** The function every connection that runs these rows registers (registerSheetRowFunctions). */
const TEXT_CELL_FUNCTION = 'price_export_text_cell';

/** Registers what the rows' SQL calls on a connection: the page threads' and the main one. */
export function registerSheetRowFunctions(db: Database.Database): void {
  db.function(TEXT_CELL_FUNCTION, { deterministic: true }, (value, open, openPreserved, escapeFormulas) =>
    specTextCellTail(String(value), String(open), String(openPreserved), escapeFormulas === 1),
  );
}

function textCell(cell: Extract<SheetRowCell, { kind: 'text' }>, column: StoredField, escapeFormulas: boolean, bind: (text: string) => string): string {
  const reference = bind(`<c r="${cell.column}`);
  const [open, openPreserved] = [bind(cell.open), bind(cell.openPreserved)];
  const plain = `quote_free & ${cellPlainBit(column)}${escapeFormulas ? ` AND substr(${column}, 1, 1) NOT IN ${FORMULA_STARTS_SQL}` : ''}`;
  return (
    `CASE WHEN ${plain} THEN concat(${reference}, sheet_row, ${open}, ${column}, @text_cell_close) ` +
    `WHEN ${column} IS NULL OR ${column} = '' THEN NULL ` +
    `ELSE concat(${reference}, sheet_row, ${TEXT_CELL_FUNCTION}(${column}, ${open}, ${openPreserved}, ${escapeFormulas ? 1 : 0})) END`
  );
}

/** A number or boolean cell's value as text. */
function valueOf(kind: 'money' | 'integer' | 'boolean', column: StoredField): string[] {
  switch (kind) {
    case 'money':
      // Minor units are never negative (CONTRACT §2): the units, then 100 + cents without its `1`.
      return [`${column} / 100`, `'.'`, `substr(100 + ${column} % 100, 2)`];
    case 'integer':
      return [column];
    case 'boolean':
      return [`CASE WHEN ${column} THEN '1' ELSE '0' END`];
  }
}

export function compileSheetRow(spec: SheetRowSpec): CompiledRecord {
  const params: Record<string, string> = { text_cell_close: TEXT_CELL_CLOSE };
  const bind = (text: string): string => {
    const name = `text${Object.keys(params).length}`;
    params[name] = text;
    return `@${name}`;
  };
  const args = new ConcatArgs(bind);
  args.text('<row r="');
  args.value('sheet_row');
  args.text('">');
  for (const cell of spec.cells) {
    if (cell.kind === 'literal') {
      args.text(`<c r="${cell.column}`);
      args.value('sheet_row');
      args.text(cell.tail);
      continue;
    }
    const column = cell.field;
    if (!isStoredField(column)) throw new Error(`${column} is no column (check canBuildRecords first)`);
    if (cell.kind === 'text') {
      args.value(textCell(cell, column, spec.escapeFormulas, bind));
    } else if (REQUIRED_FIELDS.has(column)) {
      // A field every item has needs no null case: its cell's fixed text joins the text around it.
      args.text(`<c r="${cell.column}`);
      args.value('sheet_row');
      args.text(cell.open);
      for (const part of valueOf(cell.kind, column)) args.value(part);
      args.text(cell.close);
    } else {
      const parts = [bind(`<c r="${cell.column}`), 'sheet_row', bind(cell.open), ...valueOf(cell.kind, column), bind(cell.close)];
      args.value(`CASE WHEN ${column} IS NULL THEN NULL ELSE concat(${parts.join(', ')}) END`);
    }
  }
  args.text('</row>');
  const expression = args.expression();
  if (!expression.includes('@text_cell_close')) delete params.text_cell_close;
  return { expression, params };
}
