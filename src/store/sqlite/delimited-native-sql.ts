import type { DelimitedRecordSpec } from '../../model/delimited-record.js';
import { isStoredField } from '../stored-fields.js';
import type { PageQuery } from './list-pages.js';

/*
 * A DelimitedRecordSpec as a page query of the C aggregate price_export_delimited()
 * (native/price_export_records.c, which says what each kind letter means): the page's
 * records in one pass, no expression per field. The SQL twin is delimited-sql.ts.
 */

const KIND_LETTERS = { text: 't', money: 'm', integer: 'i', boolean: 'b', literal: 'l' } as const;

/** Values at most: SQLite's historical limit on a function's arguments is 127, five of them the aggregate's own. */
const MAX_VALUES = 122;

/**
 * The page query of `spec` over the rows from ≤ seq < to (the filter: only available items);
 * null where the aggregate cannot build it, so the SQL does: a delimiter that is not one ASCII
 * character (the aggregate finds it byte by byte; every profile's is one), or more values
 * than a function takes.
 */
export function nativeRecordsPage(spec: DelimitedRecordSpec, onlyAvailable: boolean): PageQuery | null {
  if (!/^[\x00-\x7f]$/.test(spec.delimiter) || spec.fields.length > MAX_VALUES) return null;
  const params: Record<string, string> = {
    kinds: spec.fields.map((field) => KIND_LETTERS[field.kind]).join(''),
    delimiter: spec.delimiter,
    decimal: spec.decimalSeparator,
    record_end: spec.recordEnd,
  };
  const values = spec.fields.map((field, index) => {
    if (field.kind === 'literal') {
      params[`literal${index}`] = field.text;
      return `@literal${index}`;
    }
    if (!isStoredField(field.field)) throw new Error(`${field.field} is no column (check canBuildRecords first)`);
    return field.field;
  });
  // No ORDER BY: the primary key's range scan hands the rows over in seq order, and the
  // aggregate fails on a row out of that order (sorting for it measured ~35 % slower, items.ts).
  return {
    sql: `SELECT price_export_delimited(@kinds, @delimiter, @decimal, @record_end, seq${values.map((value) => `, ${value}`).join('')})
            FROM price_items WHERE price_list_id = @list AND seq >= @from AND seq < @to ${onlyAvailable ? 'AND available = 1' : ''}`,
    params,
  };
}
