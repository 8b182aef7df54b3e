import type { ExportColumn } from '../model/columns.js';
import { moneyToNumber } from '../model/money.js';
import type { PriceItem } from '../model/price-item.js';
import { renderText, UTF8_NO_BOM, type TextLayout } from './text-writer.js';
import type { ExportMeta, ExportWriter } from '../model/export-writer.js';

/*
 * JSON, CONTRACT §6: {"store": …, "price_list": …, "items": [ … ]}, streamed one item per
 * line. Each item is built by concatenation from precomputed `"key":` prefixes rather than
 * JSON.stringify of an object per item; text values still go through JSON.stringify, which
 * escapes control characters and lone surrogates, so the file always parses.
 */

type Property = (item: PriceItem) => string;

function propertyFor(column: ExportColumn): Property {
  const get = column.get;
  switch (column.kind) {
    case 'money':
      // Minor units → a JSON number: 199050 → 1990.5 (exactly as String(number) prints it).
      return (item) => {
        const value = get(item);
        return typeof value === 'number' ? String(moneyToNumber(value)) : 'null';
      };
    case 'integer':
      return (item) => {
        const value = get(item);
        return value === null ? 'null' : String(value);
      };
    case 'boolean':
      return (item) => {
        const value = get(item);
        return value === null ? 'null' : value ? 'true' : 'false';
      };
    case 'text':
      return (item) => {
        const value = get(item);
        return value === null ? 'null' : JSON.stringify(String(value));
      };
  }
}

export function jsonItemLayout(meta: ExportMeta): TextLayout {
  const prefixes = meta.columns.map((column, i) => (i === 0 ? '{' : ',') + JSON.stringify(column.key) + ':');
  const values = meta.columns.map(propertyFor);
  const count = values.length;
  const { store, priceList } = meta;
  const head = {
    store: { id: store.id, name: store.name, currency: store.currency, url: store.url, company: store.company },
    price_list: {
      version: priceList.version,
      published_at: priceList.publishedAt.toISOString(),
      currency: store.currency,
      item_count: priceList.itemCount,
    },
  };
  return {
    // The head is small and fixed: serialize it whole and open the items array.
    header: JSON.stringify(head).slice(0, -1) + ',"items":[',
    row(item, index) {
      let text = index === 0 ? '\n' : ',\n';
      if (count === 0) return text + '{}';
      for (let i = 0; i < count; i++) text += prefixes[i] + values[i](item);
      return text + '}';
    },
    footer: '\n]}\n',
  };
}

export const jsonWriter: ExportWriter = {
  format: 'json',
  extension: 'json',
  needs: { fields: 'columns', categories: false },
  contentType: () => 'application/json; charset=utf-8',
  render: (batches, meta) => renderText(batches, jsonItemLayout(meta), UTF8_NO_BOM),
};
