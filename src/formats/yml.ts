import type { ExportColumn } from '../model/columns.js';
import { formatMoney } from '../model/money.js';
import { isItemField, type PriceItem } from '../model/price-item.js';
import type { YmlRecordPart, YmlRecordSpec } from '../model/yml-record.js';
import { NO_ITEM, renderBuiltRecords, renderText, UTF8_NO_BOM, type TextLayout } from './text-writer.js';
import type { ExportMeta, RecordSourceWriter } from '../model/export-writer.js';
import { escapeAttribute, escapeText, XML_DECLARATION, xmlValue } from './xml.js';

/*
 * Yandex Market Language, CONTRACT §6.1. The element order inside <shop> and <offer> is
 * fixed by Yandex's shops.dtd (test/fixtures/yandex-shops.dtd; the tests validate every
 * YML they make against it with jing): DTD-validating importers reject other orders.
 *
 * The same offers can be built by the store next to the rows (model/yml-record.ts, see
 * ymlRecordSpec); this JavaScript layout is the reference and the fallback. The header (shop,
 * currencies, categories) and the footer are always written here.
 */

/**
 * Every YML parser knows the ruble as RUR; Yandex accepts it (CONTRACT §6.1). As data, so the
 * layout and a store that builds the offers (ymlRecordSpec) read one rule.
 */
const YML_CURRENCY_SPELLINGS: Readonly<Record<string, string>> = Object.freeze({ RUB: 'RUR' });
const ymlCurrency = (code: string): string => (Object.hasOwn(YML_CURRENCY_SPELLINGS, code) ? YML_CURRENCY_SPELLINGS[code] : code);

/** RFC 3339 in UTC with an explicit offset, to the second: `2026-11-22T07:00:00+00:00`. */
const ymlDate = (date: Date): string => `${date.toISOString().slice(0, 19)}+00:00`;

const element = (name: string, text: string): string => `<${name}>${text}</${name}>\n`;
const textElement = (name: string, value: string | null): string => (value === null ? '' : element(name, escapeText(value)));
const param = (name: string, text: string): string => `<param name="${escapeAttribute(name)}">${text}</param>\n`;

/** Item fields behind the optional offer elements (vendor_code → vendorCode, old_price → oldprice, quantity → count). */
const OPTIONAL_FIELDS = ['vendor', 'vendor_code', 'url', 'old_price', 'picture', 'description', 'barcode', 'quantity'] as const;
type OptionalField = (typeof OPTIONAL_FIELDS)[number];

/** Item fields every offer carries anyway: its attributes and required elements, and the optional ones above. */
const ELEMENT_FIELDS = new Set<string>(['offer_id', 'name', 'price', 'currency', 'category', 'available', ...OPTIONAL_FIELDS]);

/** Which optional elements and params an offer carries: all of them without a profile. */
interface OfferShape {
  has: (field: OptionalField) => boolean;
  params: (item: PriceItem) => string;
  /** The params as record parts (ymlRecordSpec); null when one cannot be described. */
  paramParts: () => YmlRecordPart[] | null;
}

const legacyShape: OfferShape = {
  has: () => true,
  params(item) {
    let text = '';
    if (item.attributes !== null) for (const [key, value] of Object.entries(item.attributes)) text += param(key, escapeText(value));
    return text;
  },
  paramParts: () => [{ kind: 'attributes' }],
};

/** With a profile: its fields pick the optional elements, and every other column is a param named by its title. */
function profileShape(columns: readonly ExportColumn[]): OfferShape {
  const fields = new Set(columns.map((column) => column.field));
  const paramColumns = columns.filter(
    (column) => column.field === null || !ELEMENT_FIELDS.has(column.field),
  );
  return {
    has: (field) => fields.has(field),
    params(item) {
      let text = '';
      for (const column of paramColumns) {
        const value = xmlValue(column.kind, column.get(item));
        if (value !== null && value !== '') text += param(column.title, value);
      }
      return text;
    },
    paramParts() {
      const parts: YmlRecordPart[] = [];
      for (const column of paramColumns) {
        const name = escapeAttribute(column.title);
        if (column.field === null) {
          // A constant is the same param in every offer (or none, when empty).
          const value = xmlValue(column.kind, column.get(NO_ITEM));
          if (value !== null && value !== '') parts.push({ kind: 'literal', text: param(column.title, value) });
        } else if (column.field.startsWith('attributes.')) {
          parts.push({ kind: 'param', name, attribute: column.field.slice('attributes.'.length), value: 'text' });
        } else if (isItemField(column.field) && (column.kind === 'text' || column.kind === 'money')) {
          // Only purchase_price (money) is an item field outside ELEMENT_FIELDS today.
          parts.push({ kind: 'param', name, field: column.field, value: column.kind });
        } else {
          return null;
        }
      }
      return parts;
    },
  };
}

function shopHeader(meta: ExportMeta): string {
  const { store, priceList } = meta;
  let text = `${XML_DECLARATION}<yml_catalog date="${ymlDate(priceList.publishedAt)}">\n<shop>\n`;
  text += textElement('name', store.name) + textElement('company', store.company ?? store.name);
  // shops.dtd requires <url>: a store without one gets it empty, so the feed stays valid
  // and the marketplace names the one missing value instead of rejecting the structure.
  text += element('url', escapeText(store.url ?? ''));
  text += '<currencies>\n';
  for (const code of priceList.currencies) {
    // The store's currency is the base (rate 1); others convert at the central bank's rate.
    text += `<currency id="${escapeAttribute(ymlCurrency(code))}" rate="${code === store.currency ? '1' : 'CB'}"/>\n`;
  }
  text += '</currencies>\n<categories>\n';
  for (const category of meta.categories) {
    const parent = category.parentId === null ? '' : ` parentId="${category.parentId}"`;
    text += `<category id="${category.id}"${parent}>${escapeText(category.name)}</category>\n`;
  }
  return text + '</categories>\n<offers>\n';
}

export function ymlOfferLayout(meta: ExportMeta): TextLayout {
  const shape = meta.legacy ? legacyShape : profileShape(meta.columns);
  const categoryIds = new Map(meta.categories.map((category) => [category.path, category.id]));
  const defaultCategoryId = categoryIds.get('');
  const categoryOf = (item: PriceItem): number => {
    const id = categoryIds.get(item.category ?? '') ?? defaultCategoryId;
    // categoryId is required and must be declared: a meta without the item's category is a bug upstream.
    if (id === undefined) throw new Error(`yml: category "${item.category ?? ''}" is not among meta.categories`);
    return id;
  };
  const has = shape.has;
  return {
    header: shopHeader(meta),
    row(item) {
      let text = `<offer id="${escapeAttribute(item.offer_id)}" available="${item.available}">\n`;
      if (has('url')) text += textElement('url', item.url);
      text += element('price', formatMoney(item.price));
      // A marketplace drops the discount when oldprice is not above price (CONTRACT §6.1).
      if (has('old_price') && item.old_price !== null && item.old_price > item.price) text += element('oldprice', formatMoney(item.old_price));
      text += element('currencyId', escapeText(ymlCurrency(item.currency)));
      text += element('categoryId', String(categoryOf(item)));
      if (has('picture')) text += textElement('picture', item.picture);
      text += textElement('name', item.name);
      if (has('vendor')) text += textElement('vendor', item.vendor);
      if (has('vendor_code')) text += textElement('vendorCode', item.vendor_code);
      if (has('description')) text += textElement('description', item.description);
      if (has('barcode')) text += textElement('barcode', item.barcode);
      // count is newer than shops.dtd; it goes where Yandex's documentation puts stock, after barcode.
      if (has('quantity') && item.quantity !== null) text += element('count', String(item.quantity));
      return text + shape.params(item) + '</offer>\n';
    },
    footer: '</offers>\n</shop>\n</yml_catalog>\n',
  };
}

/**
 * The offers as a spec a store may build itself: ymlOfferLayout's row, element for element. Null
 * when the layout does something a spec cannot say, and the JavaScript layout renders:
 * - a meta without the default category (path ''): the layout throws on an offer whose category
 *   is not declared, a bug upstream that a built offer could only hide behind some id;
 * - a profile param of a kind no item field outside the offer's elements has (none today).
 */
export function ymlRecordSpec(meta: ExportMeta): YmlRecordSpec | null {
  const ids: Record<string, number> = {};
  for (const category of meta.categories) ids[category.path] = category.id;
  const otherwise = Object.hasOwn(ids, '') ? ids[''] : undefined;
  if (otherwise === undefined) return null;
  const shape = meta.legacy ? legacyShape : profileShape(meta.columns);
  const params = shape.paramParts();
  if (params === null) return null;
  const has = shape.has;
  const parts: YmlRecordPart[] = [];
  // Consecutive literals are joined, so the fixed text between two values is one part.
  const add = (...added: YmlRecordPart[]) => {
    for (const part of added) {
      const last = parts.at(-1);
      if (part.kind === 'literal' && last?.kind === 'literal') parts[parts.length - 1] = { kind: 'literal', text: last.text + part.text };
      else parts.push(part);
    }
  };
  add({ kind: 'literal', text: '<offer id="' }, { kind: 'attribute', field: 'offer_id' });
  add({ kind: 'literal', text: '" available="' }, { kind: 'boolean', field: 'available' }, { kind: 'literal', text: '">\n' });
  if (has('url')) add({ kind: 'text', field: 'url', element: 'url' });
  add({ kind: 'money', field: 'price', element: 'price' });
  if (has('old_price')) add({ kind: 'money', field: 'old_price', element: 'oldprice', above: 'price' });
  add({ kind: 'text', field: 'currency', element: 'currencyId', spelled: YML_CURRENCY_SPELLINGS });
  add({ kind: 'category', field: 'category', element: 'categoryId', ids, otherwise });
  if (has('picture')) add({ kind: 'text', field: 'picture', element: 'picture' });
  add({ kind: 'text', field: 'name', element: 'name' });
  if (has('vendor')) add({ kind: 'text', field: 'vendor', element: 'vendor' });
  if (has('vendor_code')) add({ kind: 'text', field: 'vendor_code', element: 'vendorCode' });
  if (has('description')) add({ kind: 'text', field: 'description', element: 'description' });
  if (has('barcode')) add({ kind: 'text', field: 'barcode', element: 'barcode' });
  if (has('quantity')) add({ kind: 'integer', field: 'quantity', element: 'count' });
  add(...params, { kind: 'literal', text: '</offer>\n' });
  return { format: 'yml', parts };
}

export const ymlWriter: RecordSourceWriter = {
  format: 'yml',
  extension: 'yml',
  // The offer elements read fields beyond the columns; every offer names its category.
  needs: { fields: 'all', categories: true },
  takesRecordSource: true,
  contentType: () => 'application/xml; charset=utf-8',
  render(batches, meta, records) {
    const layout = ymlOfferLayout(meta);
    const spec = records ? ymlRecordSpec(meta) : null;
    const built = records && spec ? records(spec) : null;
    if (built) return renderBuiltRecords(layout.header, built, layout.footer);
    return renderText(batches, layout, UTF8_NO_BOM);
  },
};
