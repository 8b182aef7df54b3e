import type { JsonRecordPart, JsonRecordSpec } from '../../model/json-record.js';
import { jsonPlainBit } from '../quote-free.js';
import { sqlConcat } from '../sql-concat.js';
import { REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';
import { literal } from './sql-literal.js';
import { hasQuoteFreeBits, PipeChain, plainRowOrAny, type PlainRow } from './pipe-chain.js';

/*
 * A JsonRecordSpec compiled to one PostgreSQL expression per item (the SQLite twin is
 * sqlite/json-sql.ts). The profile's texts (keys, constants) are literals (delimited-sql.ts).
 */

/** Any row: each text tested on its own. */
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
        return `coalesce(${pgJsonMoney(c)}, 'null')`;
      case 'integer':
        return `coalesce(${c}::text, 'null')`;
      case 'boolean':
        return `CASE WHEN ${c} THEN 'true' WHEN NOT ${c} THEN 'false' ELSE 'null' END`;
    }
  };
  return sqlConcat(spec.parts.map(part));
}

/**
 * Minor units as the JSON writer prints them, String(units / 100); NULL stays NULL. PostgreSQL
 * (12 and later) prints a float8 as the shortest text that reads back as the same double (Ryu)
 * when extra_float_digits ≥ 1, as JavaScript does, and the quotient is the same IEEE division:
 * equal to JavaScript's text for every amount up to 2^53 (the contract test checks the awkward
 * ones; 305k random amounts were checked once). The dialect sets extra_float_digits to 1 on
 * each pooled connection as it opens (dialect.ts SESSION_SETTINGS), whatever the server's
 * setting. SQLite's integer rule (sqlite/json-number-sql.ts; its printf is not correctly
 * rounded) made every PostgreSQL page plan two subqueries, ~2 ms a page whatever its rows, and
 * its exact decimal cost 35 ms per 100k pairs of amounts against 27 (bench/RESULTS.md,
 * "2026-11-26, last night").
 */
export const pgJsonMoney = (c: string): string => `(${c}::float8 / 100)::text`;

/**
 * The common row: every text of the record plain for JSON (its quote_free bit) or null, as one
 * `||` chain (pipe-chain.ts) with the quotes around required texts joined to the keys'
 * literals. The test and the chain; null when the record reads no field.
 */
function plainRowRecord(spec: JsonRecordSpec): PlainRow | null {
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
        chain.value(required ? pgJsonMoney(c) : `coalesce(${pgJsonMoney(c)}, 'null')`);
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
  if (plainBits !== 0n) tests.unshift(hasQuoteFreeBits(plainBits));
  return { test: tests.length === 0 ? 'true' : tests.join(' AND '), expression };
}

export function compilePgJsonRecord(spec: JsonRecordSpec): string {
  return plainRowOrAny(plainRowRecord(spec), anyRowRecord(spec));
}
