import { AppError } from '../errors/app-error.js';
import type { ExportCategory, ExportMeta } from '../formats/types.js';
import type { KeyLookup, Store } from '../store/types.js';
import { LEGACY_COLUMNS, profileColumns } from '../model/columns.js';
import type { RecordReader } from '../model/delimited-record.js';
import type { PriceItem } from '../model/price-item.js';
import { DEFAULT_TABULAR_OPTIONS, type Profile } from '../model/profile.js';
import { getProfileForStore } from './profiles.js';

export interface ExportRequest {
  onlyAvailable: boolean;
  profileId: number | null;
  /** A retained version instead of the latest (CONTRACT §10); resolved by checkedExport after the profile. */
  version?: number | null;
  /** The writer reads nothing but meta.columns (every format but YML and the summary). */
  columnsOnly?: boolean;
}

/** What an export needs: the meta for the writer, and a way to read the items (more than once if a writer needs two passes). */
export interface ExportPlan {
  meta: ExportMeta;
  profile: Profile | null;
  readBatches(): AsyncIterable<PriceItem[]>;
  /** Delimited records built by the database, when the store can; null otherwise. */
  readRecords: RecordReader | null;
}

/** Name of the default category for items without one (CONTRACT §6.1 leaves it open). */
export const DEFAULT_CATEGORY_NAME = 'Other';

/** Checks the profile (404 before the price list, CONTRACT §3 order) and the price list, and plans the export. */
export async function planExport(store: Store, lookup: KeyLookup, request: ExportRequest): Promise<ExportPlan> {
  const profile = request.profileId === null ? null : await getProfileForStore(store, lookup.store.id, request.profileId);
  const list = lookup.latest;
  if (!list) throw new AppError('price_list_not_found', 'this store has not published a price list yet');

  const categories = (await store.getCategories(lookup.store.id, list.category_ids)).map(
    (c): ExportCategory => ({
      id: c.id,
      name: c.path === '' ? DEFAULT_CATEGORY_NAME : c.path.split(' / ').at(-1)!,
      parentId: c.parent_id,
      path: c.path,
    }),
  );
  // Parents before children, the default category last.
  categories.sort((a, b) => Number(a.path === '') - Number(b.path === '') || depth(a.path) - depth(b.path) || a.id - b.id);

  const { store: owner } = lookup;
  const meta: ExportMeta = {
    store: { id: owner.id, name: owner.name, currency: owner.currency, url: owner.url, company: owner.company },
    priceList: {
      version: list.version,
      publishedAt: list.published_at,
      itemCount: request.onlyAvailable ? list.available_count : list.item_count,
      currencies: list.currencies,
    },
    columns: profile ? profileColumns(profile.columns) : LEGACY_COLUMNS,
    legacy: profile === null,
    tabular: profile ?? DEFAULT_TABULAR_OPTIONS,
    categories,
  };
  return {
    meta,
    profile,
    readBatches: () => store.readItems(list.items_list_id, { onlyAvailable: request.onlyAvailable, withExtra: !(request.columnsOnly && readsLegacyFieldsOnly(meta.columns)) }),
    readRecords: store.renderRecords ? (spec) => store.renderRecords!(list.items_list_id, spec, { onlyAvailable: request.onlyAvailable }) : null,
  };
}

const LEGACY_FIELDS = new Set(LEGACY_COLUMNS.map((column) => column.field));

/** Columns that read only the legacy fields (or constants) need none of an item's other fields. */
const readsLegacyFieldsOnly = (columns: ExportMeta['columns']): boolean => columns.every((c) => c.field === null || LEGACY_FIELDS.has(c.field));

const depth = (path: string): number => (path === '' ? 0 : path.split(' / ').length);
