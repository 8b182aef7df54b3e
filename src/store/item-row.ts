import type { PriceItem } from '../model/price-item.js';

/**
 * How both dialects store an item: the legacy columns as real columns (the hot export path
 * reads them without parsing JSON) and the rest in one JSON text `extra`, null when empty.
 */
export type ExtraFields = Pick<
  PriceItem,
  'purchase_price' | 'picture' | 'vendor' | 'vendor_code' | 'barcode' | 'description' | 'category' | 'competitors' | 'attributes'
>;

/** The fields kept as keys of `extra`, absent when null. */
export const EXTRA_KEYS = [
  'purchase_price', 'picture', 'vendor', 'vendor_code', 'barcode', 'description', 'category', 'competitors', 'attributes',
] as const;

export function extraJson(item: PriceItem): string | null {
  let extra: Record<string, unknown> | null = null;
  for (const key of EXTRA_KEYS) {
    if (item[key] !== null) (extra ??= {})[key] = item[key];
  }
  return extra === null ? null : JSON.stringify(extra);
}

/** Column order of a stored item row, shared by both dialects' SELECTs. */
export const ITEM_COLUMNS = 'offer_id, name, price, old_price, currency, available, quantity, url, extra';
/** The same with `extra` left out (ReadItemsOptions.withExtra false). */
export const LEGACY_ITEM_COLUMNS = 'offer_id, name, price, old_price, currency, available, quantity, url, NULL';

/**
 * A raw row holding ITEM_COLUMNS from position `at` on (after a leading `seq`: 1) back into a
 * PriceItem. `extra` may come as its JSON text or already parsed (a row read as JSON).
 */
export function itemFromRow(row: unknown[], at = 0): PriceItem {
  const stored = row[at + 8];
  const extra = (stored === null ? null : typeof stored === 'string' ? JSON.parse(stored) : stored) as Partial<ExtraFields> | null;
  return {
    offer_id: row[at] as string,
    name: row[at + 1] as string,
    price: Number(row[at + 2]),
    old_price: row[at + 3] === null ? null : Number(row[at + 3]),
    currency: row[at + 4] as string,
    available: row[at + 5] === 1 || row[at + 5] === true,
    quantity: row[at + 6] === null ? null : Number(row[at + 6]),
    url: row[at + 7] as string | null,
    purchase_price: extra?.purchase_price ?? null,
    picture: extra?.picture ?? null,
    vendor: extra?.vendor ?? null,
    vendor_code: extra?.vendor_code ?? null,
    barcode: extra?.barcode ?? null,
    description: extra?.description ?? null,
    category: extra?.category ?? null,
    competitors: extra?.competitors ?? null,
    attributes: extra?.attributes ?? null,
  };
}

/** Every level of each path: `A / B` → `A`, `A / B`. Parents come before children. */
export function categoryLevels(paths: Iterable<string>): string[] {
  const levels = new Set<string>();
  for (const path of paths) {
    if (path === '') {
      levels.add('');
      continue;
    }
    const parts = path.split(' / ');
    for (let i = 1; i <= parts.length; i++) levels.add(parts.slice(0, i).join(' / '));
  }
  return [...levels].sort((a, b) => a.split(' / ').length - b.split(' / ').length || (a < b ? -1 : a > b ? 1 : 0));
}

export const parentPath = (path: string): string | null => {
  const at = path.lastIndexOf(' / ');
  return at < 0 ? null : path.slice(0, at);
};

/** Superseded lists stay readable this long, so a download that started before a publication completes. */
export const SUPERSEDED_GRACE_MS = 15 * 60_000;
/** A draft older than this was left by a crash and is removed (a million-item publication takes about a minute). */
export const STALE_DRAFT_MS = 60 * 60_000;
