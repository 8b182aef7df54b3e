import pg from 'pg';
import type { DelimitedRecordSpec, RecordField } from '../../model/delimited-record.js';
import { isCommonDelimiter, quoteFreeBit } from '../quote-free.js';
import { sqlConcat } from '../sql-concat.js';
import { isStoredField } from '../stored-fields.js';
import { pgMoneyText } from './money-sql.js';

/*
 * A DelimitedRecordSpec compiled to one PostgreSQL expression per record (the SQLite twin is
 * sqlite/delimited-sql.ts; both give the writer's bytes, delimited-records.contract.test.ts).
 * Values from a profile (the delimiter, the decimal separator, literal texts) are quoted
 * literals: the records are read by COPY, which takes no bound parameters (items.ts).
 */

/** A record as one expression over a price_items row, and a join the expression needs (YML's `e`, the row's `extra` as a record). */
export interface PgRecord {
  expression: string;
  join: string | null;
}

/** A text from a profile or a format as an SQL literal (pg's own quoting), typed text. */
export const literal = (value: string): string => `${pg.escapeLiteral(value)}::text`;

export function compilePgRecord(spec: DelimitedRecordSpec): string {
  const delimiter = literal(spec.delimiter);
  const decimal = literal(spec.decimalSeparator);
  const field = (f: RecordField): string => {
    if (f.kind === 'literal') return literal(f.text);
    const c = f.field;
    switch (f.kind) {
      case 'text': {
        const quoted = `'"' || replace(${c}, '"', '""') || '"'`;
        // The writer's rule: the delimiter, `"`, CR or LF anywhere, or a space at either end.
        const scanned = `CASE WHEN strpos(${c}, ${delimiter}) > 0 OR strpos(${c}, '"') > 0 OR strpos(${c}, E'\\n') > 0 OR strpos(${c}, E'\\r') > 0
                       OR left(${c}, 1) = ' ' OR right(${c}, 1) = ' '
                  THEN ${quoted} ELSE ${c} END`;
        // quote_free's bits (quote-free.ts) cover the common delimiters; NULL: a row stored before the column.
        if (!isStoredField(c) || !isCommonDelimiter(spec.delimiter)) return scanned;
        return `CASE WHEN quote_free IS NULL THEN ${scanned} WHEN (quote_free & ${quoteFreeBit(c, spec.delimiter)}) <> 0 THEN ${c} ELSE ${quoted} END`;
      }
      case 'money':
        // Minor units are never negative (CONTRACT §2). Another separator than `.` is joined in.
        if (spec.decimalSeparator === '.') return pgMoneyText(c);
        return `(${c} / 100)::text || ${decimal} || lpad((${c} % 100)::text, 2, '0')`;
      case 'integer':
        return `${c}::text`;
      case 'boolean':
        return `CASE WHEN ${c} THEN '1' WHEN NOT ${c} THEN '0' END`;
    }
  };
  const parts: string[] = [];
  spec.fields.forEach((f, index) => {
    if (index > 0) parts.push(delimiter);
    parts.push(field(f));
  });
  parts.push(literal(spec.recordEnd));
  return sqlConcat(parts);
}
