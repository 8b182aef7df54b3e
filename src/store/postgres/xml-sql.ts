import type { XmlRecordPart, XmlRecordSpec } from '../../model/xml-record.js';
import { xmlPlainBit } from '../quote-free.js';
import { sqlConcat } from '../sql-concat.js';
import { XML_ILLEGAL, XML_REFERENCES } from '../xml-text.js';
import { literal } from './sql-literal.js';
import { pgMoneyText } from './money-sql.js';
import { hasQuoteFreeBits, PipeChain, plainRowOrAny, type PlainRow } from './pipe-chain.js';
import { REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';

/*
 * An XmlRecordSpec compiled to one PostgreSQL expression per item (the SQLite twin is
 * sqlite/xml-sql.ts). The profile's texts (element names, constants) are literals
 * (delimited-sql.ts).
 */

/**
 * Escapes an SQL text expression as XML text (or, with the attribute references, an attribute
 * value); NULL stays NULL. `plainBit`, a quote_free bit (quote-free.ts), says there is nothing
 * to do: tested first, it spares the regular expression (~22 % of the XML records' time,
 * bench/RESULTS.md); a row stored before the column holds NULL there and takes the test.
 */
export function pgXmlEscaper(references: readonly (readonly [string, string])[] = XML_REFERENCES): (c: string, plainBit?: number) => string {
  const illegal = literal(XML_ILLEGAL.join(''));
  // One regular expression first, so the common text (nothing to do) skips the five passes:
  // 100k items' four texts, 0.16 s with the test against 0.59 s without (bench, 2 CPUs).
  // None of the characters means anything inside a bracket expression.
  const needsWork = literal(`[${references.map(([char]) => char).join('')}${XML_ILLEGAL.join('')}]`);
  return (c, plainBit) => {
    // translate() with nothing to map to drops every illegal character in one pass.
    let chain = `translate(${c}, ${illegal}, '')`;
    for (const [char, reference] of references) chain = `replace(${chain}, chr(${char.codePointAt(0)}), '${reference}')`;
    const plain = plainBit === undefined ? '' : `WHEN (quote_free & ${plainBit}) <> 0 THEN ${c} `;
    return `CASE ${plain}WHEN ${c} ~ ${needsWork} THEN ${chain} ELSE ${c} END`;
  };
}

/** The value of a field as its element's text; `text` makes a text field's (escaped or, for a plain row, as it is). */
function fieldValue(p: Exclude<XmlRecordPart, { kind: 'literal' }>, text: (c: string) => string): string {
  const c = p.field;
  switch (p.kind) {
    case 'text':
      return text(c);
    case 'money':
      return pgMoneyText(c);
    case 'integer':
      return `${c}::text`;
    case 'boolean':
      return `CASE WHEN ${c} THEN 'true' ELSE 'false' END`;
  }
}

const plainValue = (p: Exclude<XmlRecordPart, { kind: 'literal' }>): string => fieldValue(p, (c) => c);

/**
 * The common row: every text of the item plain for XML (its quote_free bit, set for a null
 * text too), as one `||` chain (pipe-chain.ts) with a required field's tags joined to the fixed
 * text around them. The test and the chain; null when the item reads no field.
 */
function plainRowRecord(spec: XmlRecordSpec): PlainRow | null {
  let plainBits = 0;
  const chain = new PipeChain();
  for (const p of spec.parts) {
    if (p.kind === 'literal') {
      chain.text(p.text);
      continue;
    }
    const bit = p.kind === 'text' ? xmlPlainBit(p.field) : 0;
    if (bit === undefined) return null;
    plainBits |= bit;
    if (REQUIRED_FIELDS.has(p.field as StoredField)) {
      chain.text(`<${p.element}>`);
      chain.value(plainValue(p));
      chain.text(`</${p.element}>`);
    } else {
      chain.value(`coalesce(${literal(`<${p.element}>`)} || ${plainValue(p)} || ${literal(`</${p.element}>`)}, ${literal(`<${p.element}/>`)})`);
    }
  }
  const expression = chain.expression();
  if (expression === null) return null;
  return { test: hasQuoteFreeBits(plainBits), expression };
}

export function compilePgXmlRecord(spec: XmlRecordSpec): string {
  return plainRowOrAny(plainRowRecord(spec), anyRowRecord(spec));
}

/** Any row: each text tested on its own. */
function anyRowRecord(spec: XmlRecordSpec): string {
  const escaped = pgXmlEscaper();
  const value = (p: Exclude<XmlRecordPart, { kind: 'literal' }>): string => fieldValue(p, (c) => escaped(c, xmlPlainBit(c)));
  const part = (p: XmlRecordPart): string => {
    if (p.kind === 'literal') return literal(p.text);
    return `CASE WHEN ${p.field} IS NULL THEN ${literal(`<${p.element}/>`)} ELSE concat(${literal(`<${p.element}>`)}, ${value(p)}, ${literal(`</${p.element}>`)}) END`;
  };
  return sqlConcat(spec.parts.map(part));
}
