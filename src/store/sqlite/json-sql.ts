import type { JsonRecordPart, JsonRecordSpec } from '../../model/json-record.js';
import { moneyAsJsonNumber } from './json-number-sql.js';
import { sqlConcat } from '../sql-concat.js';
import { isStoredField } from '../stored-fields.js';
import type { CompiledRecord } from './delimited-sql.js';

/*
 * A JsonRecordSpec compiled to one SQLite expression per item, over a price_items row. The
 * profile's texts (keys, constants) are bound parameters, never part of the SQL text.
 */

function partExpression(part: JsonRecordPart, index: number, params: Record<string, string>): string {
  if (part.kind === 'literal') {
    params[`literal${index}`] = part.text;
    return `@literal${index}`;
  }
  const column = part.field;
  if (!isStoredField(column)) throw new Error(`${column} is no column (check canBuildRecords first)`);
  switch (part.kind) {
    case 'text':
      // json_quote escapes as JSON.stringify does (`"`, `\`, \b \f \n \r \t, other controls as
      // \u00xx), and gives `null` for NULL; the contract test holds it to that.
      return `json_quote(${column})`;
    case 'money':
      return moneyAsJsonNumber(column);
    case 'integer':
      return `ifnull(${column}, 'null')`;
    case 'boolean':
      return `CASE WHEN ${column} IS NULL THEN 'null' WHEN ${column} THEN 'true' ELSE 'false' END`;
  }
}

export function compileJsonRecord(spec: JsonRecordSpec): CompiledRecord {
  const params: Record<string, string> = {};
  const expression = sqlConcat(spec.parts.map((part, index) => partExpression(part, index, params)));
  return { expression, params };
}
