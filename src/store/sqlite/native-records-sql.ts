import type { DelimitedRecordSpec } from '../../model/delimited-record.js';
import type { JsonRecordSpec } from '../../model/json-record.js';
import type { RecordSpec } from '../../model/record-spec.js';
import type { XmlRecordSpec } from '../../model/xml-record.js';
import { isStoredField } from '../stored-fields.js';
import type { PageQuery } from './list-pages.js';

/*
 * A record spec as a page query of the C aggregates (native/price_export_records.c, which says
 * what each kind letter means): the page's records in one pass, no expression per field. The
 * SQL twins are delimited-sql.ts, json-sql.ts and xml-sql.ts.
 */

const KIND_LETTERS = { text: 't', money: 'm', integer: 'i', boolean: 'b', literal: 'l' } as const;

/** Arguments at most: SQLite's historical limit on a function's arguments. */
const MAX_ARGUMENTS = 127;

/** The arguments of an aggregate call, its literals and names bound as parameters. */
class Arguments {
  readonly list: string[] = [];
  readonly params: Record<string, string> = {};

  bind(text: string): void {
    const name = `a${Object.keys(this.params).length}`;
    this.params[name] = text;
    this.list.push(`@${name}`);
  }

  column(field: string): void {
    if (!isStoredField(field)) throw new Error(`${field} is no column (check canBuildRecords first)`);
    this.list.push(field);
  }
}

function delimitedArguments(spec: DelimitedRecordSpec): Arguments | null {
  // The aggregate finds the delimiter byte by byte: one ASCII character (every profile's is).
  if (!/^[\x00-\x7f]$/.test(spec.delimiter)) return null;
  const args = new Arguments();
  for (const text of [spec.fields.map((field) => KIND_LETTERS[field.kind]).join(''), spec.delimiter, spec.decimalSeparator, spec.recordEnd]) args.bind(text);
  args.list.push('seq');
  for (const field of spec.fields) {
    if (field.kind === 'literal') args.bind(field.text);
    else args.column(field.field);
  }
  return args;
}

function jsonArguments(spec: JsonRecordSpec): Arguments {
  const args = new Arguments();
  args.bind(spec.parts.map((part) => KIND_LETTERS[part.kind]).join(''));
  args.list.push('seq');
  for (const part of spec.parts) {
    if (part.kind === 'literal') args.bind(part.text);
    else args.column(part.field);
  }
  return args;
}

function xmlArguments(spec: XmlRecordSpec): Arguments {
  const args = new Arguments();
  args.bind(spec.parts.map((part) => KIND_LETTERS[part.kind]).join(''));
  args.list.push('seq');
  for (const part of spec.parts) {
    if (part.kind === 'literal') {
      args.bind(part.text);
    } else {
      args.bind(part.element);
      args.column(part.field);
    }
  }
  return args;
}

const AGGREGATES = { delimited: 'price_export_delimited', json: 'price_export_json', xml: 'price_export_xml' } as const;

/**
 * The page query of `spec` over the rows from ≤ seq < to (the filter: only available items);
 * null where no aggregate builds it, so the SQL does: another format, a delimiter that is not
 * one ASCII character, or more arguments than a function takes.
 */
export function nativeRecordsPage(spec: RecordSpec, onlyAvailable: boolean): PageQuery | null {
  const args = spec.format === 'delimited' ? delimitedArguments(spec) : spec.format === 'json' ? jsonArguments(spec) : spec.format === 'xml' ? xmlArguments(spec) : null;
  if (args === null || args.list.length > MAX_ARGUMENTS) return null;
  // No ORDER BY: the primary key's range scan hands the rows over in seq order, and the
  // aggregate fails on a row out of that order (sorting for it measured ~35 % slower, items.ts).
  return {
    sql: `SELECT ${AGGREGATES[spec.format as keyof typeof AGGREGATES]}(${args.list.join(', ')})
            FROM price_items WHERE price_list_id = @list AND seq >= @from AND seq < @to ${onlyAvailable ? 'AND available = 1' : ''}`,
    params: args.params,
  };
}
