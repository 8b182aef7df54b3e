import type { DelimitedRecordSpec, RecordField } from '../../model/delimited-record.js';
import { isCommonDelimiter, quoteFreeBit } from '../quote-free.js';
import { sqlConcat } from '../sql-concat.js';
import { isStoredField, REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';
import { pgMoneyText } from './money-sql.js';
import { hasQuoteFreeBits, PipeChain, plainRowOrAny, type PlainRow } from './pipe-chain.js';
import { literal } from './sql-literal.js';

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

export function compilePgRecord(spec: DelimitedRecordSpec): string {
  return plainRowOrAny(plainRowRecord(spec), anyRowRecord(spec));
}

/** A money column's text with the record's decimal separator; NULL stays NULL. */
function moneyText(c: string, spec: DelimitedRecordSpec): string {
  // Minor units are never negative (CONTRACT §2). Another separator than `.` is joined in.
  if (spec.decimalSeparator === '.') return pgMoneyText(c);
  return `((${c} / 100)::text || ${literal(spec.decimalSeparator)} || lpad((${c} % 100)::text, 2, '0'))`;
}

/**
 * The common row: with a common delimiter, every text of the record needing no quoting (its
 * quote_free bit, set for a null text too), as one `||` chain (pipe-chain.ts) with the
 * delimiters joined to the fixed text. The test and the chain; null when the record cannot take it.
 */
function plainRowRecord(spec: DelimitedRecordSpec): PlainRow | null {
  if (!isCommonDelimiter(spec.delimiter)) return null;
  let plainBits = 0;
  const chain = new PipeChain();
  spec.fields.forEach((f, index) => {
    if (index > 0) chain.text(spec.delimiter);
    if (f.kind === 'literal') {
      chain.text(f.text);
      return;
    }
    const c = f.field;
    const orEmpty = (text: string) => (REQUIRED_FIELDS.has(c as StoredField) ? text : `coalesce(${text}, '')`);
    switch (f.kind) {
      case 'text':
        plainBits |= quoteFreeBit(c as StoredField, spec.delimiter);
        chain.value(orEmpty(c));
        break;
      case 'money':
        chain.value(orEmpty(moneyText(c, spec)));
        break;
      case 'integer':
        chain.value(orEmpty(`${c}::text`));
        break;
      case 'boolean':
        chain.value(`CASE WHEN ${c} THEN '1' WHEN NOT ${c} THEN '0' ELSE '' END`);
        break;
    }
  });
  chain.text(spec.recordEnd);
  const expression = chain.expression();
  if (expression === null) return null;
  return { test: hasQuoteFreeBits(plainBits), expression };
}

/** Any row: each text tested on its own. */
function anyRowRecord(spec: DelimitedRecordSpec): string {
  const delimiter = literal(spec.delimiter);
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
        return moneyText(c, spec);
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
