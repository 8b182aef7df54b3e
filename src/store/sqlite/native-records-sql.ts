import type { DelimitedRecordSpec } from '../../model/delimited-record.js';
import type { JsonRecordSpec } from '../../model/json-record.js';
import type { RecordSpec } from '../../model/record-spec.js';
import type { XmlRecordSpec } from '../../model/xml-record.js';
import { FixedTextArgs } from '../fixed-text-args.js';
import { isStoredField, REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';
import type { PageQuery } from './list-pages.js';

/*
 * A record spec as a page query of the C aggregates (native/price_export_records.c, which says
 * what each kind letter means): the page's records in one pass, no expression per field. The
 * SQL twins are delimited-sql.ts, json-sql.ts and xml-sql.ts.
 */

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

  /** A part of this kind letter, of one or more arguments: a column, or a bound text (an element's name). */
  value(kind: string, ...values: ({ column: string } | { bound: string })[]): void {
    values.forEach((value, index) => {
      if ('column' in value && !isStoredField(value.column)) throw new Error(`${value.column} is no column (check canBuildRecords first)`);
      this.args.value('bound' in value ? this.bind(value.bound) : value.column);
      // After the first argument: fixed text before it, flushed then, is a part of its own.
      if (index === 0) this.kinds += kind;
    });
  }

  /** The call's arguments: the bound kinds, then `before` (bound), then seq, then the values. */
  call(name: string, before: readonly string[] = []): { sql: string; count: number } {
    const values = this.args.list();
    const all = [...[this.kinds, ...before].map((text) => this.bind(text)), 'seq', ...values];
    return { sql: `${name}(${all.join(', ')})`, count: all.length };
  }

  private bind(text: string): string {
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

/**
 * The page query of `spec` over the rows from ≤ seq < to (the filter: only available items);
 * null where no aggregate builds it, so the SQL does: another format, a delimiter that is not
 * one ASCII character, or more arguments than a function takes.
 */
export function nativeRecordsPage(spec: RecordSpec, onlyAvailable: boolean): PageQuery | null {
  const call = spec.format === 'delimited' ? delimitedCall(spec) : spec.format === 'json' ? jsonCall(spec) : spec.format === 'xml' ? xmlCall(spec) : null;
  if (call === null || call.count > MAX_ARGUMENTS) return null;
  // No ORDER BY: the primary key's range scan hands the rows over in seq order, and the
  // aggregate fails on a row out of that order (sorting for it measured ~35 % slower, items.ts).
  return {
    sql: `SELECT ${call.sql} FROM price_items
            WHERE price_list_id = @list AND seq >= @from AND seq < @to ${onlyAvailable ? 'AND available = 1' : ''}`,
    params: call.params,
  };
}
