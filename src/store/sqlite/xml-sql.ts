import type { XmlRecordPart, XmlRecordSpec } from '../../model/xml-record.js';
import { sqlConcat } from '../sql-concat.js';
import { isStoredField } from '../stored-fields.js';
import { XML_ILLEGAL, XML_REFERENCES } from '../xml-text.js';
import type { CompiledRecord } from './delimited-sql.js';

/*
 * An XmlRecordSpec compiled to one SQLite expression per item, over a price_items row. The
 * profile's texts (element names, constants) are bound parameters, never part of the SQL text.
 */

/**
 * The text test: one GLOB over a class of every character that needs work, so the common text
 * (none) is scanned once; only a text that has one goes through the chain of replace() calls.
 */
const NEEDS_WORK = `*[${XML_REFERENCES.map(([c]) => c).join('')}${XML_ILLEGAL.join('')}]*`;

function escaped(column: string): string {
  let chain = column;
  for (const c of XML_ILLEGAL) chain = `replace(${chain}, char(${c.codePointAt(0)}), '')`;
  for (const [c, reference] of XML_REFERENCES) chain = `replace(${chain}, char(${c.codePointAt(0)}), '${reference}')`;
  return `CASE WHEN ${column} GLOB @xml_needs_work THEN ${chain} ELSE ${column} END`;
}

function value(part: Exclude<XmlRecordPart, { kind: 'literal' }>): string {
  const column = part.field;
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

function partExpression(part: XmlRecordPart, index: number, params: Record<string, string>): string {
  if (part.kind === 'literal') {
    params[`literal${index}`] = part.text;
    return `@literal${index}`;
  }
  if (!isStoredField(part.field)) throw new Error(`${part.field} is no column (check canBuildRecords first)`);
  params[`open${index}`] = `<${part.element}>`;
  params[`close${index}`] = `</${part.element}>`;
  params[`empty${index}`] = `<${part.element}/>`;
  return `CASE WHEN ${part.field} IS NULL THEN @empty${index} ELSE concat(@open${index}, ${value(part)}, @close${index}) END`;
}

export function compileXmlRecord(spec: XmlRecordSpec): CompiledRecord {
  const params: Record<string, string> = {};
  const expression = sqlConcat(spec.parts.map((part, index) => partExpression(part, index, params)));
  // Bound only when a text field uses it: better-sqlite3 refuses a parameter the statement lacks.
  if (expression.includes('@xml_needs_work')) params.xml_needs_work = NEEDS_WORK;
  return { expression, params };
}
