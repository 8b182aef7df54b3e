import type { ExportColumn } from '../model/columns.js';
import { formatMoney } from '../model/money.js';
import type { PriceItem } from '../model/price-item.js';
import { renderText, UTF8_NO_BOM, type TextLayout } from './text-writer.js';
import type { ExportMeta, ExportWriter } from '../model/export-writer.js';
import { escapeAttribute, escapeText, XML_DECLARATION, xmlValue } from './xml.js';

/*
 * Yandex Market Language, CONTRACT §6.1. The element order inside <shop> and <offer> is
 * fixed by Yandex's shops.dtd (test/fixtures/yandex-shops.dtd; the tests validate every
 * YML they make against it with jing): DTD-validating importers reject other orders.
 */

/** Every YML parser knows the ruble as RUR; Yandex accepts it (CONTRACT §6.1). */
const ymlCurrency = (code: string): string => (code === 'RUB' ? 'RUR' : code);

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
}

const legacyShape: OfferShape = {
  has: () => true,
  params(item) {
    let text = '';
    if (item.attributes !== null) for (const [key, value] of Object.entries(item.attributes)) text += param(key, escapeText(value));
    return text;
  },
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

export const ymlWriter: ExportWriter = {
  format: 'yml',
  extension: 'yml',
  // The offer elements read fields beyond the columns; every offer names its category.
  needs: { fields: 'all', categories: true },
  contentType: () => 'application/xml; charset=utf-8',
  render: (batches, meta) => renderText(batches, ymlOfferLayout(meta), UTF8_NO_BOM),
};
