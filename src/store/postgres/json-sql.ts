import type { JsonRecordPart, JsonRecordSpec } from '../../model/json-record.js';
import { EXACT_BELOW, moneyAsJsonNumber } from '../json-number-sql.js';
import { jsonPlainBit } from '../quote-free.js';
import { sqlConcat } from '../sql-concat.js';
import { REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';
import { literal } from './sql-literal.js';
import { PipeChain } from './pipe-chain.js';

/*
 * A JsonRecordSpec compiled to one PostgreSQL expression per item (the SQLite twin is
 * sqlite/json-sql.ts). The profile's texts (keys, constants) are literals (delimited-sql.ts).
 */

/** Any row: each text tested on its own, money by the exact rule for every amount. */
function anyRowRecord(spec: JsonRecordSpec): string {
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

/** Minor units below EXACT_BELOW as the exact decimal without trailing zeros (json-number-sql.ts), in `||` form. */
const exactMoney = (c: string): string =>
  `((${c} / 100)::text || CASE WHEN ${c} % 100 = 0 THEN '' WHEN ${c} % 10 = 0 THEN '.' || (${c} % 100 / 10)::text ELSE '.' || substr((100 + ${c} % 100)::text, 2) END)`;

/**
 * The common row: every text of the record plain for JSON (its quote_free bit) or null, every
 * amount below EXACT_BELOW, as one `||` chain (pipe-chain.ts) with the quotes around required
 * texts joined to the keys' literals. The test and the chain; null when the record reads no field.
 */
function plainRowRecord(spec: JsonRecordSpec): { test: string; expression: string } | null {
  const tests: string[] = [];
  let plainBits = 0n;
  const chain = new PipeChain();
  for (const p of spec.parts) {
    if (p.kind === 'literal') {
      chain.text(p.text);
      continue;
    }
    const c: StoredField = p.field as StoredField;
    const required = REQUIRED_FIELDS.has(c);
    switch (p.kind) {
      case 'text': {
        const bit = jsonPlainBit(c);
        if (bit === undefined) return null;
        // The required texts' bits are tested at once, as one mask; a null text has no JSON bit.
        if (required) plainBits |= BigInt(bit);
        else tests.push(`(${c} IS NULL OR (quote_free & ${bit}) <> 0)`);
        if (required) {
          chain.text('"');
          chain.value(c);
          chain.text('"');
        } else {
          chain.value(`coalesce('"' || ${c} || '"', 'null')`);
        }
        break;
      }
      case 'money':
        tests.push(required ? `${c} < ${EXACT_BELOW}` : `(${c} IS NULL OR ${c} < ${EXACT_BELOW})`);
        chain.value(required ? exactMoney(c) : `coalesce(${exactMoney(c)}, 'null')`);
        break;
      case 'integer':
        chain.value(required ? `${c}::text` : `coalesce(${c}::text, 'null')`);
        break;
      case 'boolean':
        chain.value(required ? `CASE WHEN ${c} THEN 'true' ELSE 'false' END` : `CASE WHEN ${c} THEN 'true' WHEN NOT ${c} THEN 'false' ELSE 'null' END`);
        break;
    }
  }
  const expression = chain.expression();
  if (expression === null) return null;
  if (plainBits !== 0n) tests.unshift(`(quote_free & ${plainBits}) = ${plainBits}`);
  return { test: tests.length === 0 ? 'true' : tests.join(' AND '), expression };
}

export function compilePgJsonRecord(spec: JsonRecordSpec): string {
  const any = anyRowRecord(spec);
  const plain = plainRowRecord(spec);
  return plain ? `CASE WHEN ${plain.test} THEN ${plain.expression} ELSE ${any} END` : any;
}
