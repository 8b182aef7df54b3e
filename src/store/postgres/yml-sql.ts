import type { ItemField } from '../../model/price-item.js';
import type { YmlRecordPart, YmlRecordSpec } from '../../model/yml-record.js';
import { ATTRIBUTES_PLAIN_BIT, extraAbsentBit, OFFER_ID_PLAIN_BIT, textPlainBit } from '../quote-free.js';
import { sqlConcat } from '../sql-concat.js';
import { isExtraField, isStoredField, REQUIRED_FIELDS, type StoredField } from '../stored-fields.js';
import { XML_ATTRIBUTE_REFERENCES } from '../xml-text.js';
import type { PgRecord } from './delimited-sql.js';
import { literal } from './sql-literal.js';
import { pgMoneyText } from './money-sql.js';
import { pgXmlEscaper } from './xml-sql.js';
import { hasQuoteFreeBits, PipeChain, plainRowOrAny, type PlainRow } from './pipe-chain.js';

/*
 * A YmlRecordSpec compiled to one PostgreSQL expression per offer (the SQLite twin is
 * sqlite/yml-sql.ts). The keys of `extra` an offer reads (vendor, picture, category…) come
 * from one jsonb of it per row, joined to the row (`e.j`). The profile's texts (param names,
 * constants) and the category ids are literals (delimited-sql.ts).
 */

/**
 * The row's `extra` parsed once as `jsonb` (`e.j`), joined laterally (OFFSET 0 keeps the planner
 * from folding the subquery into each key's read, which would parse it again per key). Its keys
 * are then looked up, not parsed: over 100k bench rows, reading six keys so took 89 ms (65–97)
 * against json_to_record's 167 (135–228), and the first YML went from 0.46–0.50× `psql \copy` to
 * 0.52–0.59× (bench/RESULTS.md, "2026-11-27, night"). jsonb orders an object's keys
 * its own way, so the attributes, printed in their stored order, are walked from the `json` text.
 * A row without `extra` skips the parse; its `e.j` is NULL.
 */
const EXTRA_JOIN = `LEFT JOIN LATERAL (SELECT extra::jsonb AS j OFFSET 0) AS e ON extra IS NOT NULL`;
/**
 * An `extra` key's value as text; purchase_price (minor units) as a bigint. A key the item
 * recorded at publication that it lacks (its quote_free absent bit) is not looked up: most items
 * have few of them (the offer's COPY of 100k bench items, 267 → 246 ms, medians of 5 rounds).
 */
function extraKey(field: string): string {
  if (field === 'purchase_price') return `((e.j ->> 'purchase_price')::bigint)`;
  const absent = extraAbsentBit(field);
  const lookup = `(e.j ->> ${literal(field)})`;
  // The bits above 31 are a bigint's: the literal is cast so.
  return absent === undefined ? lookup : `CASE WHEN (quote_free & ${absent}::bigint) <> 0 THEN NULL ELSE ${lookup} END`;
}

/**
 * The params of attributes that need no escaping, cut straight out of `extra`'s text, for a row
 * whose `extra` holds no `\`: then every `"` in it is a JSON string's quote (an inner `"` would be
 * `\"`), so `":"` and `","` occur only between a key and its value and between two members, and
 * each text is as JSON.stringify found it. extraJson writes `attributes` last, so its members run
 * from `"attributes":{"` (found nowhere else: it holds quotes) to the text's end but `"}}`. The
 * json_each_text subquery cost the server ~5.7 µs an item with attributes; cutting the text
 * instead took the whole offer's COPY of 100k items from 302 to 263 ms (medians of 5 rounds)
 * (bench/RESULTS.md, "2026-11-27, night").
 */
function plainAttributesFromText(): string {
  // After `"attributes":{"` comes `k1":"v1","k2":"v2"}}` (the object's members and the closing
  // braces of it and of `extra`); an empty object leaves nothing, hence NULL.
  const members = `left(nullif(split_part(extra, ${literal('"attributes":{"')}, 2), ''), -3)`;
  const params = `replace(replace(${members}, ${literal('":"')}, ${literal('">')}), ${literal('","')}, ${literal('</param>\n<param name="')})`;
  return `${literal('<param name="')} || ${params} || ${literal('</param>\n')}`;
}

/**
 * Every attribute as a param, by a subquery over the attributes (`key` and `value` escaped as
 * given); NULL for an item without attributes. json_each_text walks a `json` object in its
 * text's order, which is the order JSON.parse gives (the text was JSON.stringify's: integer-like
 * keys already first).
 */
const attributeParams = (key: string, value: string): string =>
  `(SELECT string_agg(concat(${literal('<param name="')}, ${key}, ${literal('">')}, ${value}, ${literal('</param>\n')}), '' ORDER BY a.n)
      FROM json_each_text(extra::json -> 'attributes') WITH ORDINALITY AS a(key, value, n))`;

/**
 * The params of an item whose attributes need no escaping (its quote_free bit); NULL for one
 * without attributes, which skips the subquery (100k bench items: 180 ms of 670 without the test).
 */
const plainAttributeParams = (): string =>
  `CASE WHEN (e.j ? 'attributes') IS NOT TRUE THEN NULL WHEN strpos(extra, ${literal('\\')}) = 0 THEN ${plainAttributesFromText()} ELSE ${attributeParams('a.key', 'a.value')} END`;

/** A field's value: its column, or its key of `extra` (the caller joins EXTRA_JOIN). */
const fieldSql = (field: ItemField): string => (isStoredField(field) ? field : extraKey(field));
/** One attribute's value (NULL when the item lacks it). */
const attributeValue = (key: string): string => `(e.j -> 'attributes' ->> ${literal(key)})`;
const booleanText = (value: string): string => `CASE WHEN ${value} THEN 'true' ELSE 'false' END`;
/** `value` spelled otherwise (`RUB` → `RUR`): the spelling where `cases` has one, else `otherwise`. */
const spelledCase = (cases: readonly (readonly [string, string])[], value: string, otherwise: string): string =>
  `CASE ${value} ${cases.map(([from, to]) => `WHEN ${literal(from)} THEN ${literal(to)}`).join(' ')} ELSE ${otherwise} END`;
/** A text part's value spelled otherwise where the spec says so, else `shown`. */
function spelledOr(p: Extract<YmlRecordPart, { kind: 'text' }>, value: string, shown: string): string {
  const spelled = Object.entries(p.spelled ?? {});
  return spelled.length === 0 ? shown : spelledCase(spelled, value, shown);
}
/** The item's category id: its path (null reads as '') as a key of the {path: id} object, else the default. */
const categoryId = (p: Extract<YmlRecordPart, { kind: 'category' }>, path: string): string =>
  `coalesce((${literal(JSON.stringify(p.ids))})::jsonb ->> coalesce(${path}, ''), ${literal(String(p.otherwise))})`;

export function compilePgYmlRecord(spec: YmlRecordSpec): PgRecord {
  const text = pgXmlEscaper();
  const attribute = pgXmlEscaper(XML_ATTRIBUTE_REFERENCES);
  let readsExtra = false;
  const read = (field: ItemField): string => {
    if (!isStoredField(field)) {
      if (!isExtraField(field)) throw new Error(`${field} is neither a column nor in extra (check canBuildRecords first)`);
      readsExtra = true;
    }
    return fieldSql(field);
  };
  // `open || value || close` is NULL, which concat() skips, when the value is NULL.
  const optional = (open: string, value: string, close: string): string => `(${literal(open)} || ${value} || ${literal(close)})`;
  const element = (name: string, value: string): string => optional(`<${name}>`, value, `</${name}>\n`);
  // A param whose value is empty once escaped is left out, as the layout does.
  const paramElement = (name: string, value: string): string => optional(`<param name="${name}">`, value, '</param>\n');

  const part = (p: YmlRecordPart): string => {
    switch (p.kind) {
      case 'literal':
        return literal(p.text);
      case 'attribute':
        return attribute(read(p.field), p.field === 'offer_id' ? OFFER_ID_PLAIN_BIT : undefined);
      case 'boolean':
        return booleanText(read(p.field));
      case 'text': {
        const c = read(p.field);
        return element(p.element, spelledOr(p, c, text(c, textPlainBit(p.field))));
      }
      case 'money': {
        const c = read(p.field);
        const shown = element(p.element, pgMoneyText(c));
        return p.above === undefined ? shown : `CASE WHEN ${c} > ${read(p.above)} THEN ${shown} END`;
      }
      case 'integer':
        return element(p.element, `(${read(p.field)})::text`);
      case 'category':
        return element(p.element, categoryId(p, read(p.field)));
      case 'attributes': {
        readsExtra = true;
        const plain = `(quote_free & ${ATTRIBUTES_PLAIN_BIT}) <> 0`;
        return `CASE WHEN ${plain} THEN ${plainAttributeParams()} ELSE ${attributeParams(attribute('a.key'), text('a.value'))} END`;
      }
      case 'param': {
        if ('attribute' in p) {
          readsExtra = true;
          return paramElement(p.name, `nullif(${text(attributeValue(p.attribute))}, '')`);
        }
        const c = read(p.field);
        if (p.value === 'money') return paramElement(p.name, pgMoneyText(c));
        return paramElement(p.name, `nullif(${text(c, textPlainBit(p.field))}, '')`);
      }
    }
  };
  const expression = plainRowOrAny(plainRowOffer(spec), sqlConcat(spec.parts.map(part)));
  return { expression, join: readsExtra ? EXTRA_JOIN : null };
}

/**
 * The common offer: every text it prints needs no escaping (their quote_free bits, set for a
 * null text too), as one `||` chain (pipe-chain.ts) with no test per text and a required field's
 * tags joined to the fixed text around them; every value that may be NULL wrapped, since NULL
 * would make the whole chain NULL. The test and the chain; null when a text the offer prints has
 * no bit (then every row takes the other form).
 */
function plainRowOffer(spec: YmlRecordSpec): PlainRow | null {
  let bits = 0;
  const need = (bit: number | undefined): boolean => {
    if (bit === undefined) return false;
    bits |= bit;
    return true;
  };
  const chain = new PipeChain();
  // `<element>value</element>\n`, or nothing when the value is NULL.
  const optional = (open: string, value: string, close: string) => chain.value(`coalesce(${literal(open)} || ${value} || ${literal(close)}, '')`);
  const required = (field: ItemField) => REQUIRED_FIELDS.has(field as StoredField);
  const tagged = (element: string, value: string) => {
    chain.text(`<${element}>`);
    chain.value(value);
    chain.text(`</${element}>\n`);
  };
  for (const p of spec.parts) {
    switch (p.kind) {
      case 'literal':
        chain.text(p.text);
        break;
      case 'attribute':
        if (p.field !== 'offer_id' || !need(OFFER_ID_PLAIN_BIT)) return null;
        chain.value(fieldSql(p.field));
        break;
      case 'boolean':
        chain.value(booleanText(fieldSql(p.field)));
        break;
      case 'text': {
        if (!need(textPlainBit(p.field))) return null;
        const c = fieldSql(p.field);
        const value = spelledOr(p, c, c);
        if (required(p.field)) tagged(p.element, value);
        else optional(`<${p.element}>`, value, `</${p.element}>\n`);
        break;
      }
      case 'money': {
        const c = fieldSql(p.field);
        const shown = `${literal(`<${p.element}>`)} || ${pgMoneyText(c)} || ${literal(`</${p.element}>\n`)}`;
        if (p.above !== undefined) chain.value(`CASE WHEN ${c} > ${fieldSql(p.above)} THEN ${shown} ELSE '' END`);
        else if (required(p.field)) tagged(p.element, pgMoneyText(c));
        else chain.value(`coalesce(${shown}, '')`);
        break;
      }
      case 'integer':
        optional(`<${p.element}>`, `(${fieldSql(p.field)})::text`, `</${p.element}>\n`);
        break;
      case 'category':
        tagged(p.element, categoryId(p, fieldSql(p.field)));
        break;
      case 'attributes':
        need(ATTRIBUTES_PLAIN_BIT);
        chain.value(`coalesce(${plainAttributeParams()}, '')`);
        break;
      case 'param': {
        const value = 'attribute' in p ? attributeValue(p.attribute) : fieldSql(p.field);
        if (!need('attribute' in p ? ATTRIBUTES_PLAIN_BIT : p.value === 'money' ? 0 : textPlainBit(p.field))) return null;
        // A param whose text is empty is left out, as the layout does.
        const shown = 'attribute' in p || p.value === 'text' ? `nullif(${value}, '')` : pgMoneyText(value);
        optional(`<param name="${p.name}">`, shown, '</param>\n');
        break;
      }
    }
  }
  const expression = chain.expression();
  if (expression === null) return null;
  return { test: hasQuoteFreeBits(bits), expression };
}
