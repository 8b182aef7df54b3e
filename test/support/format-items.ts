/*
 * Test-only helpers for the format writers: a minimal normalizer for the fixture items
 * (the real one lives with publishing), an ExportMeta builder, and byte collection.
 */
import { XMLParser } from 'fast-xml-parser';
import { readFileSync } from 'node:fs';
import { LEGACY_COLUMNS, type ExportColumn } from '../../src/model/columns.js';
import { parseMoney, type Cents } from '../../src/model/money.js';
import type { PriceItem } from '../../src/model/price-item.js';
import { DEFAULT_PRICE_TYPE_ID, DEFAULT_PRICE_TYPE_NAME, DEFAULT_TABULAR_OPTIONS, type PriceType, type TabularOptions } from '../../src/model/profile.js';
import type { ExportCategory, ExportMeta, ExportWriter } from '../../src/model/export-writer.js';

type RawItem = Record<string, unknown>;

export const fixturePath = (name: string): URL => new URL(`../fixtures/${name}`, import.meta.url);
export const readFixture = (name: string): Buffer => readFileSync(fixturePath(name));

function money(value: unknown, field: string): Cents {
  const cents = parseMoney(value);
  if (typeof cents === 'string') throw new Error(`${field} ${cents}`);
  return cents;
}

const optionalMoney = (value: unknown, field: string): Cents | null =>
  value === undefined || value === null ? null : money(value, field);

const optionalText = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** An item as the repricer publishes it → PriceItem, with the defaults of CONTRACT §2. */
export function normalizeItem(raw: RawItem, storeCurrency = 'RUB'): PriceItem {
  const quantity = typeof raw.quantity === 'number' ? raw.quantity : null;
  const competitors = Array.isArray(raw.competitors)
    ? (raw.competitors as RawItem[]).map((c) => ({
        name: String(c.name),
        price: money(c.price, 'competitor price'),
        url: optionalText(c.url),
        available: typeof c.available === 'boolean' ? c.available : null,
      }))
    : null;
  return {
    offer_id: String(raw.offer_id),
    name: String(raw.name),
    price: money(raw.price, 'price'),
    old_price: optionalMoney(raw.old_price, 'old_price'),
    purchase_price: optionalMoney(raw.purchase_price, 'purchase_price'),
    currency: optionalText(raw.currency) ?? storeCurrency,
    available: typeof raw.available === 'boolean' ? raw.available : quantity === null ? true : quantity > 0,
    quantity,
    url: optionalText(raw.url),
    picture: optionalText(raw.picture),
    vendor: optionalText(raw.vendor),
    vendor_code: optionalText(raw.vendor_code),
    barcode: optionalText(raw.barcode),
    description: optionalText(raw.description),
    category: optionalText(raw.category),
    competitors,
    attributes: (raw.attributes as Record<string, string> | undefined) ?? null,
  };
}

export interface Sample {
  store: ExportMeta['store'];
  items: PriceItem[];
}

/** test/fixtures/legacy-sample.json, normalized. */
export function legacySample(): Sample {
  const raw = JSON.parse(readFixture('legacy-sample.json').toString('utf8')) as { store: RawItem; items: RawItem[] };
  const store = {
    id: String(raw.store.id),
    name: String(raw.store.name),
    currency: String(raw.store.currency ?? 'RUB'),
    url: optionalText(raw.store.url),
    company: optionalText(raw.store.company),
  };
  return { store, items: raw.items.map((item) => normalizeItem(item, store.currency)) };
}

export const DEFAULT_CATEGORY_NAME = 'Прочее';

/** Every level of every path, parents first, ids in order of first appearance; the default one last. */
export function categoriesOf(items: readonly PriceItem[]): ExportCategory[] {
  const byPath = new Map<string, ExportCategory>();
  for (const item of items) {
    if (item.category === null) continue;
    const levels = item.category.split(' / ');
    for (let depth = 1; depth <= levels.length; depth++) {
      const path = levels.slice(0, depth).join(' / ');
      if (byPath.has(path)) continue;
      const parent = depth > 1 ? byPath.get(levels.slice(0, depth - 1).join(' / '))! : null;
      byPath.set(path, { id: byPath.size + 1, name: levels[depth - 1], parentId: parent?.id ?? null, path });
    }
  }
  return [...byPath.values(), { id: byPath.size + 1, name: DEFAULT_CATEGORY_NAME, parentId: null, path: '' }];
}

export interface MetaOptions {
  store?: ExportMeta['store'];
  columns?: readonly ExportColumn[];
  tabular?: Partial<TabularOptions>;
  version?: number;
  publishedAt?: Date;
  priceType?: PriceType;
}

export const PUBLISHED_AT = new Date('2026-11-22T07:00:00Z');

/** Meta for these items: legacy unless `columns` is given (a profile). */
export function buildMeta(items: readonly PriceItem[], options: MetaOptions = {}): ExportMeta {
  const store = options.store ?? { id: 'demo-shop', name: 'Demo Shop', currency: 'RUB', url: 'https://demo-shop.example', company: null };
  return {
    store,
    priceList: {
      version: options.version ?? 7,
      publishedAt: options.publishedAt ?? PUBLISHED_AT,
      itemCount: items.length,
      currencies: [...new Set([store.currency, ...items.map((item) => item.currency)])],
    },
    columns: options.columns ?? LEGACY_COLUMNS,
    legacy: options.columns === undefined,
    tabular: { ...DEFAULT_TABULAR_OPTIONS, ...options.tabular },
    categories: categoriesOf(items),
    priceType: options.priceType ?? { id: DEFAULT_PRICE_TYPE_ID, name: DEFAULT_PRICE_TYPE_NAME },
  };
}

/** The items as an async stream of batches, the way the store hands them out. */
export async function* inBatches<T>(items: readonly T[], size = 500): AsyncGenerator<readonly T[]> {
  for (let start = 0; start < items.length; start += size) yield items.slice(start, start + size);
}

export async function collectChunks(stream: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** The writer's whole output for these items. */
export async function renderToBuffer(writer: ExportWriter, items: readonly PriceItem[], meta = buildMeta(items)): Promise<Buffer> {
  return Buffer.concat(await collectChunks(writer.render(inBatches(items), meta)));
}

/** An item with only the required fields and everything optional absent. */
export function plainItem(overrides: Partial<PriceItem> = {}): PriceItem {
  return { ...normalizeItem({ offer_id: 'X-1', name: 'Item', price: 1 }), ...overrides };
}

/**
 * An XML reader that keeps every value as written (no number or boolean guessing, no trimming,
 * entities and numeric references resolved, attributes under `@name`), with `repeated` always
 * read as an array: the view the XML, Google and CommerceML writer tests check our bytes with.
 */
export function textXmlParser(repeated: string): XMLParser {
  return new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    htmlEntities: true,
    isArray: (name) => name === repeated,
  });
}
