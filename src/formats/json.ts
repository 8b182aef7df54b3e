import type { ExportColumn } from '../model/columns.js';
import type { JsonRecordPart, JsonRecordSpec } from '../model/json-record.js';
import { moneyToNumber } from '../model/money.js';
import { isItemField, ITEM_FIELDS, type PriceItem } from '../model/price-item.js';
import { NO_ITEM, renderBuiltRecords, renderText, UTF8_NO_BOM, type TextLayout } from './text-writer.js';
import type { ExportMeta, RecordSourceWriter } from '../model/export-writer.js';

/*
 * JSON, CONTRACT §6: {"store": …, "price_list": …, "items": [ … ]}, streamed one item per
 * line. Each item is built by concatenation from precomputed `"key":` prefixes rather than
 * JSON.stringify of an object per item; text values still go through JSON.stringify, which
 * escapes control characters and lone surrogates, so the file always parses.
 *
 * The same items can be built by the store next to the rows (model/json-record.ts), which the
 * first export of a list takes when every column is a stored field or a constant; this
 * JavaScript layout is the reference and the fallback.
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

/** Every item but the first starts with this; the store's items all do (see jsonRecordSpec). */
const ITEM_SEPARATOR = ',\n';

/**
 * The items as a spec a store may build itself: the layout's row with its `"key":` prefixes and
 * constants as literal parts, each starting with {@link ITEM_SEPARATOR}; null when a column
 * reads what a spec cannot name (an attribute). Which fields the store holds is its to say.
 */
export function jsonRecordSpec(columns: readonly ExportColumn[]): JsonRecordSpec | null {
  const parts: JsonRecordPart[] = [];
  // Literal text is gathered until the next field, so a row of constants is one part.
  let literal = ITEM_SEPARATOR + '{';
  for (const [i, column] of columns.entries()) {
    literal += (i === 0 ? '' : ',') + JSON.stringify(column.key) + ':';
    if (column.field === null) {
      literal += propertyFor(column)(NO_ITEM);
    } else if (isItemField(column.field) && column.kind === ITEM_FIELDS[column.field]) {
      parts.push({ kind: 'literal', text: literal }, { kind: column.kind, field: column.field });
      literal = '';
    } else {
      return null;
    }
  }
  parts.push({ kind: 'literal', text: literal + '}' });
  return { format: 'json', parts };
}

/** The built items without the first one's leading comma (every built item starts with ITEM_SEPARATOR). */
export async function* withoutFirstSeparator(items: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let first = true;
  for await (const chunk of items) {
    if (chunk.length === 0) continue;
    if (first) {
      if (chunk[0] !== ITEM_SEPARATOR.charCodeAt(0)) throw new Error('a built JSON item must start with its separator');
      first = false;
      yield chunk.subarray(1);
    } else {
      yield chunk;
    }
  }
}

export const jsonWriter: RecordSourceWriter = {
  format: 'json',
  extension: 'json',
  needs: { fields: 'columns', categories: false },
  takesRecordSource: true,
  contentType: () => 'application/json; charset=utf-8',
  render(batches, meta, records) {
    const layout = jsonItemLayout(meta);
    const spec = records ? jsonRecordSpec(meta.columns) : null;
    const built = records && spec ? records(spec) : null;
    if (built) return renderBuiltRecords(layout.header, withoutFirstSeparator(built), layout.footer);
    return renderText(batches, layout, UTF8_NO_BOM);
  },
};
