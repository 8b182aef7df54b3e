import type { ItemField } from '../../model/price-item.js';
import type { YmlRecordPart, YmlRecordSpec } from '../../model/yml-record.js';
import { sqlConcat } from '../sql-concat.js';
import { isExtraField, isStoredField } from '../stored-fields.js';
import { XML_ATTRIBUTE_REFERENCES, XML_REFERENCES } from '../xml-text.js';
import type { CompiledRecord } from './delimited-sql.js';
import { escapedXmlSql, TEXT_FIELDS, xmlPlainBit, xmlWorkGlob } from './xml-sql.js';

/*
 * A YmlRecordSpec compiled to one SQLite expression per offer, over a price_items row: the
 * stored fields, `quote_free` and `extra`, whose keys (vendor, picture, category, attributes…)
 * are read with json_extract (SQLite keeps the parse of a row's `extra` for the next call).
 * The profile's texts (param names, constants) and the category ids are bound parameters.
 */

/**
 * A JSON object label as SQLite's path syntax reads it: quoted, with `\` and `"` escaped. SQLite
 * ends a quoted label at its first `"`, escaped or not, and decodes the escapes before it
 * compares, so a `"` goes as `\u0022`; `.`, `[` or `$` in a quoted label mean nothing.
 */
const pathLabel = (key: string): string => `"${key.replaceAll('\\', '\\\\').replaceAll('"', '\\u0022')}"`;
/** The same in SQL, for a key the row holds. */
const pathLabelSql = (key: string): string => `'"' || replace(replace(${key}, '\\', '\\\\'), '"', '\\u0022') || '"'`;

/** Minor units (never negative, CONTRACT §2) as units, `.` and two digits; NULL stays NULL. */
// `||` binds tighter than `/` in SQLite: the division needs its parentheses.
const money = (v: string): string => `(((${v}) / 100) || '.' || substr(100 + (${v}) % 100, 2))`;

export function compileYmlRecord(spec: YmlRecordSpec): CompiledRecord {
  const params: Record<string, string> = {};
  let bound = 0;
  const bind = (text: string): string => {
    const name = `yml${bound++}`;
    params[name] = text;
    return `@${name}`;
  };
  let readsExtra = false;
  const read = (field: ItemField): string => {
    if (isStoredField(field)) return field;
    if (!isExtraField(field)) throw new Error(`${field} is neither a column nor in extra (check canBuildRecords first)`);
    readsExtra = true;
    return `json_extract(extra, '$.${field}')`;
  };
  // The GLOB patterns are bound only when used: better-sqlite3 refuses a parameter the statement lacks.
  const text = (value: string, plainBit?: number): string => {
    params.yml_text_work ??= xmlWorkGlob(XML_REFERENCES);
    return escapedXmlSql(value, XML_REFERENCES, '@yml_text_work', plainBit);
  };
  const attribute = (value: string): string => {
    params.yml_attribute_work ??= xmlWorkGlob(XML_ATTRIBUTE_REFERENCES);
    return escapedXmlSql(value, XML_ATTRIBUTE_REFERENCES, '@yml_attribute_work');
  };
  const textField = (field: ItemField): string => {
    const value = read(field);
    // A stored text field's quote_free bit says whether XML text leaves it as it is (xml-sql.ts).
    return text(value, isStoredField(field) && (TEXT_FIELDS as readonly string[]).includes(field) ? xmlPlainBit(field) : undefined);
  };
  // `open || value || close` is NULL, which concat() skips, when the value is NULL.
  const optional = (open: string, value: string, close: string): string => `(${bind(open)} || ${value} || ${bind(close)})`;
  // A param whose value is empty once escaped is left out, as the layout does.
  const param = (name: string, value: string): string => optional(`<param name="${name}">`, value, '</param>\n');

  // The arguments of the offer's concat(); fixed text between two values is one parameter.
  const args: string[] = [];
  let literal = '';
  const value = (expression: string) => {
    if (literal !== '') args.push(bind(literal));
    literal = '';
    args.push(expression);
  };
  const element = (name: string, expression: string) => {
    literal += `<${name}>`;
    value(expression);
    literal += `</${name}>\n`;
  };

  const partExpression = (part: YmlRecordPart): void => {
    switch (part.kind) {
      case 'literal':
        literal += part.text;
        return;
      case 'attribute':
        return value(attribute(read(part.field)));
      case 'boolean':
        return value(`CASE WHEN ${read(part.field)} THEN 'true' ELSE 'false' END`);
      case 'text': {
        let escaped = textField(part.field);
        const spelled = Object.entries(part.spelled ?? {});
        if (spelled.length > 0) escaped = `CASE ${read(part.field)} ${spelled.map(([from, to]) => `WHEN ${bind(from)} THEN ${bind(to)}`).join(' ')} ELSE ${escaped} END`;
        return value(optional(`<${part.element}>`, escaped, `</${part.element}>\n`));
      }
      case 'money': {
        const v = read(part.field);
        const shown = optional(`<${part.element}>`, money(v), `</${part.element}>\n`);
        return value(part.above === undefined ? shown : `CASE WHEN ${v} > ${read(part.above)} THEN ${shown} END`);
      }
      case 'integer':
        return value(optional(`<${part.element}>`, read(part.field), `</${part.element}>\n`));
      case 'category': {
        // The item's path (null reads as '') as a key of the bound {path: id} object.
        const path = `'$.' || ${pathLabelSql(`coalesce(${read(part.field)}, '')`)}`;
        return element(part.element, `coalesce(json_extract(${bind(JSON.stringify(part.ids))}, ${path}), ${bind(String(part.otherwise))})`);
      }
      case 'attributes':
        readsExtra = true;
        // json_each walks the object in its text's order, which is the order JSON.parse gives
        // (the text was JSON.stringify's: integer-like keys already first); group_concat
        // joins in arrival order.
        return value(
          `(SELECT group_concat(${bind('<param name="')} || ${attribute('key')} || ${bind('">')} || ${text('value')} || ${bind('</param>\n')}, '')`
            + ` FROM json_each(extra, '$.attributes'))`,
        );
      case 'param': {
        if ('attribute' in part) {
          readsExtra = true;
          const v = `json_extract(extra, ${bind(`$.attributes.${pathLabel(part.attribute)}`)})`;
          return value(param(part.name, `nullif(${text(v)}, '')`));
        }
        const v = read(part.field);
        if (part.value === 'money') return value(param(part.name, money(v)));
        return value(param(part.name, `nullif(${textField(part.field)}, '')`));
      }
    }
  };
  for (const part of spec.parts) partExpression(part);
  if (literal !== '') args.push(bind(literal));
  return { expression: sqlConcat(args), params, readsExtra };
}
