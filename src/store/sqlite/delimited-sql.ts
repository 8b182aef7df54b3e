import type { DelimitedRecordSpec, RecordField } from '../../model/delimited-record.js';
import { isStoredField } from '../stored-fields.js';
import { isCommonDelimiter, quoteFreeBit } from '../quote-free.js';
import { sqlConcat } from '../sql-concat.js';

/*
 * A DelimitedRecordSpec compiled to one SQLite expression per record, over a price_items row
 * (the stored fields and `quote_free`). Every value that comes from a profile (the delimiter,
 * the decimal separator, literal texts) is a bound parameter, never part of the SQL text.
 */

export interface CompiledRecord {
  /** An SQL expression over a price_items row giving the whole record as text. */
  expression: string;
  /** Named parameters the expression uses (without the `@`). */
  params: Record<string, string>;
  /** Whether the expression reads the row's `extra` JSON text besides the stored fields (YML offers). */
  readsExtra?: boolean;
  /** Tables the expression reads, each `name(columns) AS (select)`: the WITH clause of the statement it goes in. */
  tables?: readonly string[];
}

/**
 * The "must be quoted" test of the CSV writer: the delimiter, `"`, CR or LF anywhere, or a
 * space at either end. GLOB with one character class scans the text once and measured
 * fastest of the forms tried (instr per character, LIKE). A delimiter that means something
 * inside a GLOB class (`]`, `^`, `-`, …) is tested apart with instr.
 */
function mustQuote(column: string, delimiter: string, params: Record<string, string>): string {
  const inClass = !/[\]^\-*?[\\]/.test(delimiter);
  params.special = `*[${inClass ? delimiter : ''}"\r\n]*`;
  const delimiterApart = inClass ? '' : ` OR instr(${column}, @delimiter) > 0`;
  return `${column} GLOB @special${delimiterApart} OR ${column} GLOB ' *' OR ${column} GLOB '* '`;
}

/**
 * One field's text, or NULL for an empty field (concat() takes NULL as ''). `plain`: the row's
 * texts are known to need no quoting (the caller tested their quote_free bits), so a text
 * field is its column as it is.
 */
function fieldExpression(field: RecordField, index: number, delimiter: string, params: Record<string, string>, plain: boolean): string {
  if (field.kind === 'literal') {
    params[`literal${index}`] = field.text;
    return `@literal${index}`;
  }
  const column = field.field;
  if (!isStoredField(column)) throw new Error(`${column} is no column (check canBuildRecords first)`);
  switch (field.kind) {
    case 'text': {
      if (plain) return column;
      const quoted = `concat('"', replace(${column}, '"', '""'), '"')`;
      const scanned = `CASE WHEN ${mustQuote(column, delimiter, params)} THEN ${quoted} ELSE ${column} END`;
      // quote_free's bits (quote-free.ts) cover the common delimiters; NULL: a row stored before the column.
      if (!isCommonDelimiter(delimiter)) return scanned;
      return `CASE WHEN quote_free IS NULL THEN ${scanned} WHEN quote_free & ${quoteFreeBit(column, delimiter)} THEN ${column} ELSE ${quoted} END`;
    }
    case 'money':
      // Minor units are never negative (CONTRACT §2): the units, then 100 + cents without its `1`;
      // NULL stays NULL through `||` (one call fewer than concat() behind a NULL test: 100k rows'
      // two amounts 24.2 → 20.5 ms, bench/RESULTS.md).
      return `((${column} / 100) || @decimal || substr(100 + ${column} % 100, 2))`;
    case 'integer':
      return column;
    case 'boolean':
      return `CASE WHEN ${column} IS NULL THEN NULL WHEN ${column} THEN '1' ELSE '0' END`;
  }
}

/** The record of `spec` as one concat(); `plain` as in fieldExpression. */
function recordExpression(spec: DelimitedRecordSpec, params: Record<string, string>, plain: boolean): string {
  const parts: string[] = [];
  spec.fields.forEach((field, index) => {
    if (index > 0) parts.push('@delimiter');
    parts.push(fieldExpression(field, index, spec.delimiter, params, plain));
  });
  parts.push('@record_end');
  // One concat() per record: `a || b || …` copies the growing record once per part.
  return sqlConcat(parts);
}

export function compileRecord(spec: DelimitedRecordSpec): CompiledRecord {
  const params: Record<string, string> = { delimiter: spec.delimiter, decimal: spec.decimalSeparator, record_end: spec.recordEnd };
  let expression = recordExpression(spec, params, false);
  // With a common delimiter, a row whose every text field has its "no quoting" bit set takes the
  // record without a test per field: one test instead of one per text (100k legacy records:
  // 56.4 → 52.9 ms, bench/RESULTS.md). NULL bits fail the test and take the full record.
  const texts = spec.fields.flatMap((field) => (field.kind === 'text' && isStoredField(field.field) ? [field.field] : []));
  if (texts.length > 0 && isCommonDelimiter(spec.delimiter)) {
    const mask = texts.reduce((bits, column) => bits | quoteFreeBit(column, spec.delimiter), 0);
    expression = `CASE WHEN (quote_free & ${mask}) = ${mask} THEN ${recordExpression(spec, params, true)} ELSE ${expression} END`;
  }
  // Parameters the expression does not use would make better-sqlite3 refuse the statement.
  for (const name of Object.keys(params)) if (!expression.includes(`@${name}`)) delete params[name];
  return { expression, params };
}
