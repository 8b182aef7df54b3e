import type { DelimitedRecordSpec, RecordField } from '../../model/delimited-record.js';
import { sqlConcat } from '../sql-concat.js';

/*
 * A DelimitedRecordSpec compiled to one PostgreSQL expression per record (the SQLite twin is
 * sqlite/delimited-sql.ts; both give the writer's bytes, delimited-records.contract.test.ts).
 * Values from a profile (the delimiter, the decimal separator, literal texts) are bound
 * parameters, from `$firstParam` on.
 */

export interface CompiledPgRecord {
  expression: string;
  values: string[];
}

/** A compiler's bound texts: `param` adds one and answers its placeholder, from `$firstParam` on. */
export function textParams(firstParam: number): { values: string[]; param: (value: string) => string } {
  const values: string[] = [];
  return {
    values,
    param: (value) => {
      values.push(value);
      return `$${firstParam + values.length - 1}::text`;
    },
  };
}

export function compilePgRecord(spec: DelimitedRecordSpec, firstParam: number): CompiledPgRecord {
  const { values, param } = textParams(firstParam);
  // Bound on first use: PostgreSQL refuses a parameter no expression uses (it cannot type it).
  const lazily = (value: string): (() => string) => {
    let placeholder: string | undefined;
    return () => (placeholder ??= param(value));
  };
  const delimiterParam = lazily(spec.delimiter);
  const decimalParam = lazily(spec.decimalSeparator);
  const field = (f: RecordField): string => {
    if (f.kind === 'literal') return param(f.text);
    const c = f.field;
    switch (f.kind) {
      case 'text':
        // The writer's rule: the delimiter, `"`, CR or LF anywhere, or a space at either end.
        return `CASE WHEN strpos(${c}, ${delimiterParam()}) > 0 OR strpos(${c}, '"') > 0 OR strpos(${c}, E'\\n') > 0 OR strpos(${c}, E'\\r') > 0
                       OR left(${c}, 1) = ' ' OR right(${c}, 1) = ' '
                  THEN '"' || replace(${c}, '"', '""') || '"' ELSE ${c} END`;
      case 'money':
        // Minor units are never negative (CONTRACT §2).
        return `(${c} / 100)::text || ${decimalParam()} || lpad((${c} % 100)::text, 2, '0')`;
      case 'integer':
        return `${c}::text`;
      case 'boolean':
        return `CASE WHEN ${c} THEN '1' WHEN NOT ${c} THEN '0' END`;
    }
  };
  const parts: string[] = [];
  spec.fields.forEach((f, index) => {
    if (index > 0) parts.push(delimiterParam());
    parts.push(field(f));
  });
  parts.push(param(spec.recordEnd));
  return { expression: sqlConcat(parts), values };
}
