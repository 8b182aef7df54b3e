import type { XmlRecordPart, XmlRecordSpec } from '../../model/xml-record.js';
import { isStoredField, REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';
import { xmlPlainBit } from '../quote-free.js';
import { XML_ILLEGAL, XML_REFERENCES } from '../xml-text.js';
import { ConcatArgs } from './concat-args.js';
import type { CompiledRecord } from './delimited-sql.js';

/*
 * An XmlRecordSpec compiled to one SQLite expression per item, over a price_items row. The
 * profile's texts (element names, constants) are bound parameters, never part of the SQL text.
 */

/*
 * The text test: `quote_free`'s bit (quote-free.ts) for the rows stored with it; else one GLOB
 * over a class of every character that needs work, and only a text that has one goes through
 * the chain of replace() calls.
 */

/** A GLOB pattern that matches a text holding one of these characters. */
export const xmlWorkGlob = (references: readonly (readonly [string, string])[]): string =>
  `*[${references.map(([c]) => c).join('')}${XML_ILLEGAL.join('')}]*`;

/**
 * `value` (an SQL text expression, evaluated up to three times: a column or a cheap read) with
 * the characters XML cannot carry dropped and these references made; `needsWork` names the
 * bound xmlWorkGlob of the same references, `plainBit` a quote_free bit that says there is
 * nothing to do. NULL stays NULL.
 */
export function escapedXmlSql(value: string, references: readonly (readonly [string, string])[], needsWork: string, plainBit?: number): string {
  let chain = value;
  for (const c of XML_ILLEGAL) chain = `replace(${chain}, char(${c.codePointAt(0)}), '')`;
  for (const [c, reference] of references) chain = `replace(${chain}, char(${c.codePointAt(0)}), '${reference}')`;
  const plain = plainBit === undefined ? '' : `WHEN quote_free & ${plainBit} THEN ${value} `;
  return `CASE ${plain}WHEN ${value} GLOB ${needsWork} THEN ${chain} ELSE ${value} END`;
}

const escaped = (column: StoredField): string => escapedXmlSql(column, XML_REFERENCES, '@xml_needs_work', xmlPlainBit(column));

function valueOf(part: Exclude<XmlRecordPart, { kind: 'literal' }>, column: StoredField): string {
  switch (part.kind) {
    case 'text':
      return escaped(column);
    case 'money':
      // Minor units are never negative (CONTRACT §2): the units, then 100 + cents without its `1`.
      return `concat(${column} / 100, '.', substr(100 + ${column} % 100, 2))`;
    case 'integer':
      return column;
    case 'boolean':
      return `CASE WHEN ${column} THEN 'true' ELSE 'false' END`;
  }
}

export function compileXmlRecord(spec: XmlRecordSpec): CompiledRecord {
  const params: Record<string, string> = {};
  const bind = (text: string): string => {
    const name = `text${Object.keys(params).length}`;
    params[name] = text;
    return `@${name}`;
  };
  // A field every item has needs no null case: its tags join the fixed text around it (the
  // legacy item of 100k rows in one statement: 88 ms so, 118 ms with a CASE each).
  const args = new ConcatArgs(bind);
  for (const part of spec.parts) {
    if (part.kind === 'literal') {
      args.text(part.text);
      continue;
    }
    const column = part.field;
    if (!isStoredField(column)) throw new Error(`${column} is no column (check canBuildRecords first)`);
    if (REQUIRED_FIELDS.has(column)) {
      args.text(`<${part.element}>`);
      args.value(valueOf(part, column));
      args.text(`</${part.element}>`);
    } else {
      args.value(`CASE WHEN ${column} IS NULL THEN ${bind(`<${part.element}/>`)} ELSE concat(${bind(`<${part.element}>`)}, ${valueOf(part, column)}, ${bind(`</${part.element}>`)}) END`);
    }
  }
  const expression = args.expression();
  // Bound only when a text field uses it: better-sqlite3 refuses a parameter the statement lacks.
  if (expression.includes('@xml_needs_work')) params.xml_needs_work = xmlWorkGlob(XML_REFERENCES);
  return { expression, params };
}
