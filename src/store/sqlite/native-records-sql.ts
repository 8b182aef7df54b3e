import type { RecordSpec } from '../../model/record-spec.js';
import { callColumns, nativeRecordsCall, type NativeArgument } from '../native-records-call.js';
import type { PageQuery } from './list-pages.js';

/*
 * A record spec as a page query of the C aggregates the records extension registers
 * (native-records-call.ts makes the call): texts bound as parameters, columns by name.
 */

/** A call of the C aggregates as SQL: columns by name, texts bound as parameters (`@a0`, `@a1`, …). */
export interface NativeRecordsSelect {
  /** The aggregate's call, e.g. `price_export_json(@a0, seq, name, …)`. */
  expression: string;
  params: Record<string, string>;
  /** The columns it reads (callColumns). */
  columns: readonly string[];
}

/** `spec`'s aggregate call; null where no aggregate builds it (nativeRecordsCall), so the SQL does. */
export function nativeRecordsSelect(spec: RecordSpec): NativeRecordsSelect | null {
  const call = nativeRecordsCall(spec);
  if (call === null) return null;
  const params: Record<string, string> = {};
  const bind = (text: string) => {
    const name = `a${Object.keys(params).length}`;
    params[name] = text;
    return `@${name}`;
  };
  const sql = (arg: NativeArgument): string => {
    if ('column' in arg) return arg.column;
    return arg.text === null ? 'NULL' : bind(arg.text);
  };
  const expression = `${call.name}(${call.args.map(sql).join(', ')})`;
  return { expression, params, columns: callColumns(call) };
}

/**
 * The page query of `spec` over the rows from ≤ seq < to (the filter: only available items);
 * null where no aggregate builds it (nativeRecordsCall), so the SQL does.
 */
export function nativeRecordsPage(spec: RecordSpec, onlyAvailable: boolean): PageQuery | null {
  const select = nativeRecordsSelect(spec);
  if (select === null) return null;
  // No ORDER BY: the primary key's range scan hands the rows over in seq order, and the
  // aggregate fails on a row out of that order (sorting for it measured ~35 % slower, items.ts).
  return {
    sql: `SELECT ${select.expression} FROM price_items
            WHERE price_list_id = @list AND seq >= @from AND seq < @to ${onlyAvailable ? 'AND available = 1' : ''}`,
    params: select.params,
  };
}
