import { FORMULA_STARTS } from '../model/formula-escape.js';

/**
 * escapeFormula's first characters as an SQL list for `NOT IN`, `('=', '+', …)`: the XLSX rows of
 * both dialects (sqlite/sheet-row-sql.ts, postgres/sheet-row-sql.ts) leave a text as it is only
 * when it does not start with one.
 */
export const FORMULA_STARTS_SQL = `(${FORMULA_STARTS.map((c) => `'${c}'`).join(', ')})`;
