import type { ItemField } from '../../model/price-item.js';
import type { YmlRecordPart, YmlRecordSpec } from '../../model/yml-record.js';
import { isExtraField, isStoredField } from '../stored-fields.js';
import { ATTRIBUTES_PLAIN_BIT, extraAbsentBit, OFFER_ID_PLAIN_BIT, textPlainBit } from '../quote-free.js';
import { XML_ATTRIBUTE_REFERENCES, XML_REFERENCES } from '../xml-text.js';
import { ConcatArgs } from './concat-args.js';
import type { CompiledRecord } from './delimited-sql.js';
import { escapedXmlSql, xmlWorkGlob } from './xml-sql.js';

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

/**
 * Minor units (never negative, CONTRACT §2) as units, `.` and two digits; NULL stays NULL.
 * `||` binds tighter than `/` in SQLite: the division needs its parentheses.
 */
const money = (v: string): string => `(((${v}) / 100) || '.' || substr(100 + (${v}) % 100, 2))`;

/** `value` spelled otherwise (`RUB` → `RUR`), the texts bound by `bind`: the spelling where `cases` has one, else `otherwise`. */
const spelledCase = (cases: readonly (readonly [string, string])[], value: string, bind: (text: string) => string, otherwise: string): string =>
  `CASE ${value} ${cases.map(([from, to]) => `WHEN ${bind(from)} THEN ${bind(to)}`).join(' ')} ELSE ${otherwise} END`;

export function compileYmlRecord(spec: YmlRecordSpec): CompiledRecord {
  const params: Record<string, string> = {};
  let bound = 0;
  const bind = (text: string): string => {
    const name = `yml${bound++}`;
    params[name] = text;
    return `@${name}`;
  };
  let readsExtra = false;
  const tables: string[] = [];
  const read = (field: ItemField): string => {
    if (isStoredField(field)) return field;
    if (!isExtraField(field)) throw new Error(`${field} is neither a column nor in extra (check canBuildRecords first)`);
    readsExtra = true;
    const absent = extraAbsentBit(field);
    const extract = `json_extract(extra, '$.${field}')`;
    return absent === undefined ? extract : `CASE WHEN quote_free & ${absent} THEN NULL ELSE ${extract} END`;
  };
  // The GLOB patterns are bound only when used: better-sqlite3 refuses a parameter the statement lacks.
  const text = (value: string, plainBit?: number): string => {
    params.yml_text_work ??= xmlWorkGlob(XML_REFERENCES);
    return escapedXmlSql(value, XML_REFERENCES, '@yml_text_work', plainBit);
  };
  const attribute = (value: string, plainBit?: number): string => {
    params.yml_attribute_work ??= xmlWorkGlob(XML_ATTRIBUTE_REFERENCES);
    return escapedXmlSql(value, XML_ATTRIBUTE_REFERENCES, '@yml_attribute_work', plainBit);
  };
  const textField = (field: ItemField): string => {
    const value = read(field);
    return text(value, textPlainBit(field));
  };
  // `open || value || close` is NULL, which concat() skips, when the value is NULL.
  const optional = (open: string, value: string, close: string): string => `(${bind(open)} || ${value} || ${bind(close)})`;
  // A param whose value is empty once escaped is left out, as the layout does.
  const param = (name: string, value: string): string => optional(`<param name="${name}">`, value, '</param>\n');

  // The arguments of the offer's concat().
  const args = new ConcatArgs(bind);
  const value = (expression: string) => args.value(expression);
  const element = (name: string, expression: string) => {
    args.text(`<${name}>`);
    value(expression);
    args.text(`</${name}>\n`);
  };

  const partExpression = (part: YmlRecordPart): void => {
    switch (part.kind) {
      case 'literal':
        args.text(part.text);
        return;
      case 'attribute':
        return value(attribute(read(part.field), part.field === 'offer_id' ? OFFER_ID_PLAIN_BIT : undefined));
      case 'boolean':
        return value(`CASE WHEN ${read(part.field)} THEN 'true' ELSE 'false' END`);
      case 'text': {
        let escaped = textField(part.field);
        const spelled = Object.entries(part.spelled ?? {});
        if (spelled.length > 0) escaped = spelledCase(spelled, read(part.field), bind, escaped);
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
        // The bound {path: id} object as a table the statement builds once, which SQLite searches
        // by an automatic index: the item's path (null reads as '') found in a few steps whatever
        // the number of categories. A JSON path into the object per offer walked its keys: the
        // SQL of 100k offers took 5.8× as long with 3,021 categories, about the same with 21
        // (bench/RESULTS.md, "YML: the category look-up on SQLite").
        const table = `yml_categories${tables.length}`;
        tables.push(`${table}(path, id) AS MATERIALIZED (SELECT key, value FROM json_each(${bind(JSON.stringify(part.ids))}))`);
        return element(part.element, `coalesce((SELECT id FROM ${table} WHERE path = coalesce(${read(part.field)}, '')), ${bind(String(part.otherwise))})`);
      }
      case 'attributes': {
        readsExtra = true;
        // json_each walks the object in its text's order, which is the order JSON.parse gives
        // (the text was JSON.stringify's: integer-like keys already first); group_concat
        // joins in arrival order.
        const all = (name: string, shown: string) =>
          `(SELECT group_concat(${bind('<param name="')} || ${name} || ${bind('">')} || ${shown} || ${bind('</param>\n')}, '') FROM json_each(extra, '$.attributes'))`;
        // extraJson writes this key so, and no text inside a JSON string can hold its `"` unescaped:
        // an item without attributes (or without extra) skips the subquery.
        return value(
          `CASE WHEN ifnull(instr(extra, '"attributes":{'), 0) = 0 THEN NULL WHEN quote_free & ${ATTRIBUTES_PLAIN_BIT} THEN ${all('key', 'value')}`
            + ` ELSE ${all(attribute('key'), text('value'))} END`,
        );
      }
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
  return { expression: args.expression(), params, readsExtra, tables: tables.length > 0 ? tables : undefined };
}
