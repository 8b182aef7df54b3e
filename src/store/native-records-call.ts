import type { DelimitedRecordSpec } from '../model/delimited-record.js';
import type { JsonRecordSpec } from '../model/json-record.js';
import type { RecordSpec } from '../model/record-spec.js';
import type { XmlRecordSpec } from '../model/xml-record.js';
import type { YmlRecordPart, YmlRecordSpec } from '../model/yml-record.js';
import { FixedTextArgs } from './fixed-text-args.js';
import { isExtraField, isStoredField, REQUIRED_FIELDS, type StoredField } from './stored-fields.js';

/*
 * A record spec as a call of the C aggregates (sqlite/native/price_export_records.c and
 * sqlite/native/yml_offers.c, which say what each kind letter means): the page's records in one
 * pass, no expression per field. SQLite runs the call as SQL (sqlite/native-records-sql.ts);
 * PostgreSQL's instance runs the same C over a COPY of the columns it reads
 * (postgres/native-copy-records.ts). The SQL twins are each dialect's delimited-, json-, xml-
 * and yml-sql.ts.
 */

/** One argument of a call: a text constant (the kinds, a literal, an element's name, a spelling map; null for a NULL) or a column of the row. */
export type NativeArgument = { text: string | null } | { column: StoredField | 'seq' | 'extra' };

export interface NativeCall {
  name: 'price_export_delimited' | 'price_export_json' | 'price_export_xml' | 'price_export_yml';
  args: readonly NativeArgument[];
}

/** A part's argument: a column or a constant text (an element's name, a spelling map). */
type PartArgument = { column: StoredField } | { text: string };

const KIND_LETTERS = { text: 't', money: 'm', integer: 'i', boolean: 'b', literal: 'l' } as const;

/** Arguments at most: SQLite's historical limit on a function's arguments. */
export const MAX_NATIVE_ARGUMENTS = 127;

/**
 * The arguments of a call after its kinds and seq: fixed text between two values joined into
 * one literal (fixed-text-args.ts; a required field's tags or quotes with it: one copy per row
 * instead of three), and the kind letter of each part.
 */
class Arguments {
  private kinds = '';
  private readonly args = new FixedTextArgs<NativeArgument>((text) => {
    this.kinds += 'l';
    return { text };
  });

  /** Fixed text, joined to the fixed text right before or after it. */
  text(text: string): void {
    this.args.text(text);
  }

  /** A part of this kind letter, of one or more arguments. */
  value(kind: string, ...values: PartArgument[]): void {
    values.forEach((value, index) => {
      if ('column' in value && !isStoredField(value.column)) throw new Error(`${value.column} is no column (check canBuildRecords first)`);
      this.args.value(value);
      // After the first argument: fixed text before it, flushed then, is a part of its own.
      if (index === 0) this.kinds += kind;
    });
  }

  /** The call: the kinds, then `before`, then seq, then `columns`, then the values. */
  call(name: NativeCall['name'], before: readonly (string | null)[] = [], columns: readonly 'extra'[] = []): NativeCall {
    const values = this.args.list();
    return {
      name,
      args: [...[this.kinds, ...before].map((text) => ({ text })), { column: 'seq' }, ...columns.map((column) => ({ column })), ...values],
    };
  }
}

function delimitedCall(spec: DelimitedRecordSpec): NativeCall | null {
  // The aggregate finds the delimiter byte by byte: one ASCII character (every profile's is).
  if (!/^[\x00-\x7f]$/.test(spec.delimiter)) return null;
  // One kind per field, each field its own argument: the delimiters are the aggregate's to write.
  const args = new Arguments();
  for (const field of spec.fields) {
    if (field.kind === 'literal') args.value('l', { text: field.text });
    else args.value(KIND_LETTERS[field.kind], { column: field.field as StoredField });
  }
  return args.call('price_export_delimited', [spec.delimiter, spec.decimalSeparator, spec.recordEnd]);
}

function jsonCall(spec: JsonRecordSpec): NativeCall {
  const args = new Arguments();
  for (const part of spec.parts) {
    if (part.kind === 'literal') {
      args.text(part.text);
    } else if (part.kind === 'text' && REQUIRED_FIELDS.has(part.field as StoredField)) {
      // `s`: the text without its quotes, which join the fixed text around it.
      args.text('"');
      args.value('s', { column: part.field as StoredField });
      args.text('"');
    } else {
      args.value(KIND_LETTERS[part.kind], { column: part.field as StoredField });
    }
  }
  return args.call('price_export_json');
}

function xmlCall(spec: XmlRecordSpec): NativeCall {
  const args = new Arguments();
  for (const part of spec.parts) {
    if (part.kind === 'literal') {
      args.text(part.text);
    } else if (REQUIRED_FIELDS.has(part.field as StoredField)) {
      // Upper case: the value alone, its tags joined to the fixed text around it.
      args.text(`<${part.element}>`);
      args.value(KIND_LETTERS[part.kind].toUpperCase(), { column: part.field as StoredField });
      args.text(`</${part.element}>`);
    } else {
      args.value(KIND_LETTERS[part.kind], { text: part.element }, { column: part.field as StoredField });
    }
  }
  return args.call('price_export_xml');
}

/** A field's value argument and the kind letter's prefix: a column as it is, an `extra` key after `x`. */
function source(field: string): { prefix: '' | 'x'; value: { column: StoredField } | { text: string } } | null {
  if (isStoredField(field)) return { prefix: '', value: { column: field } };
  // competitors is no text an offer prints: the SQL prints its JSON as json_extract gives it.
  return isExtraField(field) && field !== 'competitors' ? { prefix: 'x', value: { text: field } } : null;
}

/** A value every item has (kind T, S or M), between its element's tags as fixed text. */
function tagged(args: Arguments, element: string, kind: string, ...values: PartArgument[]): void {
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
    args.value('xA', { text: 'attributes' });
    return true;
  }
  if ('attribute' in part) {
    args.value('xq', { text: part.name }, { text: 'attributes' }, { text: part.attribute });
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
      const spelled = part.spelled !== undefined && Object.keys(part.spelled).length > 0;
      if (!spelled && required) {
        tagged(args, part.element, 'T', from.value);
      } else if (!spelled) {
        args.value(`${from.prefix}t`, { text: part.element }, from.value);
      } else {
        // The aggregate spells a column's text only (S and s take no `x`).
        if (!('column' in from.value)) return false;
        // The map as a constant the aggregate looks the text up in, not a CASE per row (yml_offers.c says why).
        const spellings = { text: JSON.stringify(part.spelled) };
        if (required) tagged(args, part.element, 'S', spellings, from.value);
        else args.value('s', { text: part.element }, spellings, from.value);
      }
      return true;
    }
    case 'money':
      if (part.above !== undefined) {
        if (from.prefix || !isStoredField(part.above)) return false;
        args.value('o', { text: part.element }, from.value, { column: part.above });
      } else if (required) {
        tagged(args, part.element, 'M', from.value);
      } else {
        args.value(`${from.prefix}m`, { text: part.element }, from.value);
      }
      return true;
    case 'integer':
      args.value(`${from.prefix}i`, { text: part.element }, from.value);
      return true;
    case 'category':
      if (categories.ids !== null) return false;
      categories.ids = JSON.stringify(part.ids);
      args.value(`${from.prefix}c`, { text: part.element }, from.value, { text: String(part.otherwise) });
      return true;
    case 'param':
      args.value(`${from.prefix}${part.value === 'money' ? 'P' : 'p'}`, { text: part.name }, from.value);
      return true;
  }
}

function ymlCall(spec: YmlRecordSpec): NativeCall | null {
  const args = new Arguments();
  const categories = { ids: null as string | null };
  for (const part of spec.parts) if (!ymlPart(args, part, categories)) return null;
  return args.call('price_export_yml', [categories.ids], ['extra']);
}

/** The columns a call reads (seq among them), each once, in the order it first reads them. */
export const callColumns = (call: NativeCall): string[] => [...new Set(call.args.flatMap((arg) => ('column' in arg ? [arg.column] : [])))];

/**
 * The aggregate call that builds `spec`'s records; null where none does, so the SQL does: another
 * format (XLSX's rows), a delimiter that is not one ASCII character, a YML part ymlPart leaves to
 * the SQL, or more arguments than a function takes.
 */
export function nativeRecordsCall(spec: RecordSpec): NativeCall | null {
  const call = spec.format === 'delimited' ? delimitedCall(spec)
    : spec.format === 'json' ? jsonCall(spec)
    : spec.format === 'xml' ? xmlCall(spec)
    : spec.format === 'yml' ? ymlCall(spec)
    : null;
  return call === null || call.args.length > MAX_NATIVE_ARGUMENTS ? null : call;
}
