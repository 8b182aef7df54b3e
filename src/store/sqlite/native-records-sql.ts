import type { DelimitedRecordSpec } from '../../model/delimited-record.js';
import type { JsonRecordSpec } from '../../model/json-record.js';
import type { RecordSpec } from '../../model/record-spec.js';
import type { XmlRecordSpec } from '../../model/xml-record.js';
import type { YmlRecordPart, YmlRecordSpec } from '../../model/yml-record.js';
import { FixedTextArgs } from '../fixed-text-args.js';
import { isExtraField, isStoredField, REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';
import type { PageQuery } from './list-pages.js';

/*
 * A record spec as a page query of the C aggregates (native/price_export_records.c and
 * native/yml_offers.c, which say what each kind letter means): the page's records in one pass,
 * no expression per field. The SQL twins are delimited-sql.ts, json-sql.ts, xml-sql.ts and
 * yml-sql.ts.
 */

/** A part's argument: a column, a bound text (an element's name), or an expression over the row. */
type ArgumentValue = { column: string } | { bound: string } | { sql: string };

const KIND_LETTERS = { text: 't', money: 'm', integer: 'i', boolean: 'b', literal: 'l' } as const;

/** Arguments at most: SQLite's historical limit on a function's arguments. */
const MAX_ARGUMENTS = 127;

/**
 * The arguments of an aggregate call after its kinds and seq: literals and names bound as
 * parameters, fixed text between two values joined into one literal (fixed-text-args.ts; a
 * required field's tags or quotes with it: one copy per row instead of three), and the kind
 * letter of each part.
 */
class Arguments {
  readonly params: Record<string, string> = {};
  private kinds = '';
  private readonly args = new FixedTextArgs((text) => {
    this.kinds += 'l';
    return this.bind(text);
  });

  /** Fixed text, joined to the fixed text right before or after it. */
  text(text: string): void {
    this.args.text(text);
  }

  /** A part of this kind letter, of one or more arguments: a column, a bound text (an element's name), or an expression over the row. */
  value(kind: string, ...values: ArgumentValue[]): void {
    values.forEach((value, index) => {
      if ('column' in value && !isStoredField(value.column)) throw new Error(`${value.column} is no column (check canBuildRecords first)`);
      this.args.value('bound' in value ? this.bind(value.bound) : 'sql' in value ? value.sql : value.column);
      // After the first argument: fixed text before it, flushed then, is a part of its own.
      if (index === 0) this.kinds += kind;
    });
  }

  /** The call's arguments: the bound kinds, then `before` (bound), then seq, then `columns`, then the values. */
  call(name: string, before: readonly (string | null)[] = [], columns: readonly string[] = []): { sql: string; count: number } {
    const values = this.args.list();
    const all = [...[this.kinds, ...before].map((text) => (text === null ? 'NULL' : this.bind(text))), 'seq', ...columns, ...values];
    return { sql: `${name}(${all.join(', ')})`, count: all.length };
  }

  bind(text: string): string {
    const name = `a${Object.keys(this.params).length}`;
    this.params[name] = text;
    return `@${name}`;
  }
}

type Call = { sql: string; count: number; params: Record<string, string> };

function delimitedCall(spec: DelimitedRecordSpec): Call | null {
  // The aggregate finds the delimiter byte by byte: one ASCII character (every profile's is).
  if (!/^[\x00-\x7f]$/.test(spec.delimiter)) return null;
  // One kind per field, each field its own argument: the delimiters are the aggregate's to write.
  const args = new Arguments();
  for (const field of spec.fields) {
    if (field.kind === 'literal') args.value('l', { bound: field.text });
    else args.value(KIND_LETTERS[field.kind], { column: field.field });
  }
  return { ...args.call('price_export_delimited', [spec.delimiter, spec.decimalSeparator, spec.recordEnd]), params: args.params };
}

function jsonCall(spec: JsonRecordSpec): Call {
  const args = new Arguments();
  for (const part of spec.parts) {
    if (part.kind === 'literal') {
      args.text(part.text);
    } else if (part.kind === 'text' && REQUIRED_FIELDS.has(part.field as StoredField)) {
      // `s`: the text without its quotes, which join the fixed text around it.
      args.text('"');
      args.value('s', { column: part.field });
      args.text('"');
    } else {
      args.value(KIND_LETTERS[part.kind], { column: part.field });
    }
  }
  return { ...args.call('price_export_json'), params: args.params };
}

function xmlCall(spec: XmlRecordSpec): Call {
  const args = new Arguments();
  for (const part of spec.parts) {
    if (part.kind === 'literal') {
      args.text(part.text);
    } else if (REQUIRED_FIELDS.has(part.field as StoredField)) {
      // Upper case: the value alone, its tags joined to the fixed text around it.
      args.text(`<${part.element}>`);
      args.value(KIND_LETTERS[part.kind].toUpperCase(), { column: part.field });
      args.text(`</${part.element}>`);
    } else {
      args.value(KIND_LETTERS[part.kind], { bound: part.element }, { column: part.field });
    }
  }
  return { ...args.call('price_export_xml'), params: args.params };
}

/** A field's value argument and the kind letter's prefix: a column as it is, an `extra` key after `x`. */
function source(field: string): { prefix: '' | 'x'; value: { column: string } | { bound: string } } | null {
  if (isStoredField(field)) return { prefix: '', value: { column: field } };
  // competitors is no text an offer prints: the SQL prints its JSON as json_extract gives it.
  return isExtraField(field) && field !== 'competitors' ? { prefix: 'x', value: { bound: field } } : null;
}

/** A value every item has (kind T, S or M), between its element's tags as fixed text. */
function tagged(args: Arguments, element: string, kind: string, ...values: ArgumentValue[]): void {
  args.text(`<${element}>`);
  args.value(kind, ...values);
  args.text(`</${element}>\n`);
}

/**
 * One part of an offer; false where the aggregate does not take it (the SQL does): a spelling or
 * a comparison of a field kept in `extra`, a second category part.
 */
function ymlPart(args: Arguments, part: YmlRecordPart, categories: { ids: string | null }): boolean {
  if (part.kind === 'literal') {
    args.text(part.text);
    return true;
  }
  if (part.kind === 'attributes') {
    args.value('xA', { bound: 'attributes' });
    return true;
  }
  if ('attribute' in part) {
    args.value('xq', { bound: part.name }, { bound: 'attributes' }, { bound: part.attribute });
    return true;
  }
  const from = source(part.field);
  if (from === null) return false;
  const required = REQUIRED_FIELDS.has(part.field as StoredField);
  switch (part.kind) {
    case 'attribute':
      args.value(`${from.prefix}a`, from.value);
      return true;
    case 'boolean':
      if (from.prefix) return false;
      args.value('b', from.value);
      return true;
    case 'text': {
      const spelled = Object.entries(part.spelled ?? {});
      if (spelled.length === 0 && required) {
        tagged(args, part.element, 'T', from.value);
      } else if (spelled.length === 0) {
        args.value(`${from.prefix}t`, { bound: part.element }, from.value);
      } else {
        if (from.prefix) return false;
        const spelling = { sql: `CASE ${part.field} ${spelled.map(([was, is]) => `WHEN ${args.bind(was)} THEN ${args.bind(is)}`).join(' ')} END` };
        if (required) tagged(args, part.element, 'S', spelling, from.value);
        else args.value('s', { bound: part.element }, spelling, from.value);
      }
      return true;
    }
    case 'money':
      if (part.above !== undefined) {
        if (from.prefix || !isStoredField(part.above)) return false;
        args.value('o', { bound: part.element }, from.value, { column: part.above });
      } else if (required) {
        tagged(args, part.element, 'M', from.value);
      } else {
        args.value(`${from.prefix}m`, { bound: part.element }, from.value);
      }
      return true;
    case 'integer':
      args.value(`${from.prefix}i`, { bound: part.element }, from.value);
      return true;
    case 'category':
      if (categories.ids !== null) return false;
      categories.ids = JSON.stringify(part.ids);
      args.value(`${from.prefix}c`, { bound: part.element }, from.value, { bound: String(part.otherwise) });
      return true;
    case 'param':
      args.value(`${from.prefix}${part.value === 'money' ? 'P' : 'p'}`, { bound: part.name }, from.value);
      return true;
  }
}

function ymlCall(spec: YmlRecordSpec): Call | null {
  const args = new Arguments();
  const categories = { ids: null as string | null };
  for (const part of spec.parts) if (!ymlPart(args, part, categories)) return null;
  return { ...args.call('price_export_yml', [categories.ids], ['extra']), params: args.params };
}

/**
 * The page query of `spec` over the rows from ≤ seq < to (the filter: only available items);
 * null where no aggregate builds it, so the SQL does: another format (XLSX's rows), a delimiter
 * that is not one ASCII character, a YML part ymlPart leaves to the SQL, or more arguments than a
 * function takes.
 */
export function nativeRecordsPage(spec: RecordSpec, onlyAvailable: boolean): PageQuery | null {
  const call = spec.format === 'delimited' ? delimitedCall(spec)
    : spec.format === 'json' ? jsonCall(spec)
    : spec.format === 'xml' ? xmlCall(spec)
    : spec.format === 'yml' ? ymlCall(spec)
    : null;
  if (call === null || call.count > MAX_ARGUMENTS) return null;
  // No ORDER BY: the primary key's range scan hands the rows over in seq order, and the
  // aggregate fails on a row out of that order (sorting for it measured ~35 % slower, items.ts).
  return {
    sql: `SELECT ${call.sql} FROM price_items
            WHERE price_list_id = @list AND seq >= @from AND seq < @to ${onlyAvailable ? 'AND available = 1' : ''}`,
    params: call.params,
  };
}
