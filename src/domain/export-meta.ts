import { LEGACY_COLUMNS, profileColumns } from '../model/columns.js';
import type { ExportCategory, ExportMeta } from '../model/export-writer.js';
import { DEFAULT_PRICE_TYPE_ID, DEFAULT_PRICE_TYPE_NAME, DEFAULT_TABULAR_OPTIONS, type Profile } from '../model/profile.js';
import type { PriceListRecord, Database, StoreRecord } from '../store/types.js';

/* What every export (the full file and the changes feed) tells its writer besides the items. */

/** The list an export was reading was deleted under it: the bytes so far are not the whole list. */
export class ListGoneWhileReadError extends Error {
  constructor(version: number) {
    super(`version ${version} was deleted while it was being read; the export is incomplete`);
    this.name = 'ListGoneWhileReadError';
  }
}

/** Name of the default category for items without one (CONTRACT §6.1 leaves it open). */
export const DEFAULT_CATEGORY_NAME = 'Other';

export function exportMeta(owner: StoreRecord, list: PriceListRecord, profile: Profile | null, onlyAvailable: boolean): ExportMeta {
  return {
    store: { id: owner.id, name: owner.name, currency: owner.currency, url: owner.url, company: owner.company },
    priceList: {
      version: list.version,
      publishedAt: list.published_at,
      itemCount: onlyAvailable ? list.available_count : list.item_count,
      currencies: list.currencies,
    },
    columns: profile ? profileColumns(profile.columns) : LEGACY_COLUMNS,
    legacy: profile === null,
    tabular: profile ?? DEFAULT_TABULAR_OPTIONS,
    categories: [],
    priceType: { id: profile?.price_type_id ?? DEFAULT_PRICE_TYPE_ID, name: profile?.price_type_name ?? DEFAULT_PRICE_TYPE_NAME },
  };
}

/** The list's categories, parents before children, the default category last. */
export async function exportCategories(db: Database, storeId: string, ids: readonly number[]): Promise<ExportCategory[]> {
  const categories = (await db.priceLists.categories(storeId, ids)).map(
    (c): ExportCategory => ({
      id: c.id,
      name: c.path === '' ? DEFAULT_CATEGORY_NAME : c.path.split(' / ').at(-1)!,
      parentId: c.parent_id,
      path: c.path,
    }),
  );
  categories.sort((a, b) => Number(a.path === '') - Number(b.path === '') || depth(a.path) - depth(b.path) || a.id - b.id);
  return categories;
}

/** `demo-shop-20261122T070000Z.csv`: store id (an ASCII slug) and publication time. */
export function exportFileName(storeId: string, publishedAt: Date, extension: string, suffix = ''): string {
  // `2026-11-22T07:00:00.000Z` → `20261122T070000Z` by slicing (every download asks; regexes cost more).
  const iso = publishedAt.toISOString();
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return `${storeId}${suffix}-${stamp}.${extension}`;
}

const LEGACY_FIELDS = new Set(LEGACY_COLUMNS.map((column) => column.field));

/** Columns that read only the legacy fields (or constants) need none of an item's other fields. */
export const readsLegacyFieldsOnly = (columns: ExportMeta['columns']): boolean => columns.every((c) => c.field === null || LEGACY_FIELDS.has(c.field));

const depth = (path: string): number => (path === '' ? 0 : path.split(' / ').length);

/**
 * An export's Last-Modified: the later of the publication and the profile's last edit (a profile
 * edit changes the bytes, so a client revalidating with If-Modified-Since alone must not keep
 * the old columns).
 */
export const exportLastModified = (list: PriceListRecord, profile: Profile | null): Date =>
  profile && profile.updated_at > list.published_at ? profile.updated_at : list.published_at;
