import { formatMoney } from '../model/money.js';
import type { PriceItem } from '../model/price-item.js';
import { renderText, UTF8_NO_BOM, type TextLayout } from './text-writer.js';
import type { ExportMeta, ExportWriter } from '../model/export-writer.js';
import { escapeText, XML_DECLARATION } from './xml.js';

/*
 * Google Merchant Center product feed, CONTRACT §14: RSS 2.0 with the `g:` namespace, one
 * <item> per item. Without a profile every attribute the item has is written; with one, the
 * profile's fields pick the optional attributes (as in YML), and the required ones (id, title,
 * availability, price, condition) always appear.
 */

const GOOGLE_NAMESPACE = 'http://base.google.com/ns/1.0';

/** Item fields behind Google's optional attributes. */
type OptionalField = 'description' | 'url' | 'picture' | 'old_price' | 'vendor' | 'barcode' | 'vendor_code' | 'category';

const element = (name: string, text: string): string => `<${name}>${text}</${name}>\n`;
const textElement = (name: string, value: string | null): string => (value === null || value === '' ? '' : element(name, escapeText(value)));

/** `1990.00 RUB`: two decimals, a point, a space, the ISO 4217 code (Google's price syntax). */
export const googlePrice = (cents: number, currency: string): string => `${formatMoney(cents)} ${currency}`;

/** Our ` / ` category path as Google's product_type, whose levels are separated by ` > `. */
export const productType = (category: string): string => category.split(' / ').join(' > ');

function channelHeader(meta: ExportMeta): string {
  const { store, priceList } = meta;
  // RSS 2.0's channel wants title, link and description; a store without a url has no link to give.
  return (
    XML_DECLARATION +
    `<rss version="2.0" xmlns:g="${GOOGLE_NAMESPACE}">\n<channel>\n` +
    element('title', escapeText(store.name)) +
    textElement('link', store.url) +
    element('description', escapeText(`${store.name}: price list version ${priceList.version}`))
  );
}

function itemLayout(meta: ExportMeta): TextLayout {
  const fields = new Set(meta.columns.map((column) => column.field));
  const has = meta.legacy ? () => true : (field: OptionalField) => fields.has(field);
  return {
    header: channelHeader(meta),
    row(item: PriceItem) {
      let text = '<item>\n';
      text += element('g:id', escapeText(item.offer_id));
      text += element('g:title', escapeText(item.name));
      if (has('description')) text += textElement('g:description', item.description);
      if (has('url')) text += textElement('g:link', item.url);
      if (has('picture')) text += textElement('g:image_link', item.picture);
      text += element('g:availability', item.available ? 'in_stock' : 'out_of_stock');
      const currency = escapeText(item.currency);
      // Google's sale rule: price is the regular (higher) price and sale_price the one charged.
      if (has('old_price') && item.old_price !== null && item.old_price > item.price) {
        text += element('g:price', googlePrice(item.old_price, currency));
        text += element('g:sale_price', googlePrice(item.price, currency));
      } else {
        text += element('g:price', googlePrice(item.price, currency));
      }
      if (has('vendor')) text += textElement('g:brand', item.vendor);
      if (has('barcode')) text += textElement('g:gtin', item.barcode);
      if (has('vendor_code')) text += textElement('g:mpn', item.vendor_code);
      if (has('category') && item.category !== null) text += textElement('g:product_type', productType(item.category));
      return text + '<g:condition>new</g:condition>\n</item>\n';
    },
    footer: '</channel>\n</rss>\n',
  };
}

/** Google Merchant Center RSS 2.0 feed (CONTRACT §14), UTF-8. */
export const googleWriter: ExportWriter = {
  format: 'google',
  extension: 'xml',
  contentType: () => 'application/xml; charset=utf-8',
  needs: { fields: 'all', categories: false },
  render: (batches, meta) => renderText(batches, itemLayout(meta), UTF8_NO_BOM),
};
