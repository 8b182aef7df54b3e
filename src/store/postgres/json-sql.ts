import type { JsonRecordPart, JsonRecordSpec } from '../../model/json-record.js';
import { moneyAsJsonNumber } from '../json-number-sql.js';
import { jsonPlainBit } from '../quote-free.js';
import { sqlConcat } from '../sql-concat.js';
import { literal } from './delimited-sql.js';

/*
 * A JsonRecordSpec compiled to one PostgreSQL expression per item (the SQLite twin is
 * sqlite/json-sql.ts). The profile's texts (keys, constants) are literals (delimited-sql.ts).
 */

export function compilePgJsonRecord(spec: JsonRecordSpec): string {
  const part = (p: JsonRecordPart): string => {
    if (p.kind === 'literal') return literal(p.text);
    const c = p.field;
    switch (p.kind) {
      case 'text': {
        // to_json escapes as JSON.stringify does (the contract test holds it to that); NULL stays NULL.
        const stringified = `coalesce(to_json(${c})::text, 'null')`;
        // quote_free's bit (quote-free.ts): a text with nothing to escape, quoted as it is.
        const plain = jsonPlainBit(c);
        return plain === undefined ? stringified : `CASE WHEN (quote_free & ${plain}) <> 0 THEN '"' || ${c} || '"' ELSE ${stringified} END`;
      }
      case 'money':
        return moneyAsJsonNumber(c);
      case 'integer':
        return `coalesce(${c}::text, 'null')`;
      case 'boolean':
        return `CASE WHEN ${c} THEN 'true' WHEN NOT ${c} THEN 'false' ELSE 'null' END`;
    }
  };
  return sqlConcat(spec.parts.map(part));
}
