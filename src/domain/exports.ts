import { AppError } from '../errors/app-error.js';
import { LEGACY_COLUMNS, profileColumns } from '../model/columns.js';
import type { RecordReader } from '../model/delimited-record.js';
import { takesRecordSource, type ExportCategory, type ExportMeta, type ExportWriter, type ExportWriters } from '../model/export-writer.js';
import type { PriceItem } from '../model/price-item.js';
import { DEFAULT_PRICE_TYPE_ID, DEFAULT_PRICE_TYPE_NAME, DEFAULT_TABULAR_OPTIONS, type Profile } from '../model/profile.js';
import type { PriceListRecord, Database, StoreRecord } from '../store/types.js';
import { getProfileForStore } from './profiles.js';
import { retainedVersion } from './versions.js';

/*
 * The one export path (issue #12): every address (2, 3, 4) and the cache warmer ask `resolve`
 * for what the validators need, and `open` for the bytes. The profile is read once, in
 * `resolve`, so the variant a response is tagged with is the variant its bytes are made of.
 */

/** What a caller asks for; the key check is the caller's (the warmer has no key). */
/** The list an export was reading was deleted under it: the bytes so far are not the whole list. */
export class ListGoneWhileReadError extends Error {
  constructor(version: number) {
    super(`version ${version} was deleted while it was being read; the export is incomplete`);
    this.name = 'ListGoneWhileReadError';
  }
}

export interface ExportRequest {
  /** `prices`: addresses 2 and 4 (any format); `summary`: address 3 (the matrix workbook). */
  endpoint: 'prices' | 'summary';
  /** A format of the writers registry; null: the legacy CSV (the summary is always xlsx). */
  format: string | null;
  onlyAvailable: boolean;
  profileId: number | null;
  /** A retained version instead of the latest (CONTRACT §10, addresses 2 and 4); checked after the profile. */
  version?: number | null;
}

/** Whose list: a key lookup's store and latest list (or the warmer's read of it). */
export interface ExportSubject {
  store: StoreRecord;
  list: PriceListRecord | null;
}

/** Everything that shapes the bytes of one export; two requests with equal variants get equal bytes. */
export interface ExportVariant {
  endpoint: 'prices' | 'summary';
  storeId: string;
  priceListId: number;
  version: number;
  format: string;
  profileId: number | null;
  profileRevision: number | null;
  onlyAvailable: boolean;
}

/** One export, checked and identified; nothing of the list is read until `open`. */
export interface ResolvedExport {
  readonly variant: ExportVariant;
  /**
   * The later of the publication and the profile's last edit: a profile edit changes the bytes,
   * so a client revalidating with If-Modified-Since alone must not keep the old columns.
   */
  readonly lastModified: Date;
  /** `demo-shop-20261122T070000Z.csv` (the publication time, not the profile's). */
  fileName(): string;
  contentType(): string;
}

/** Name of the default category for items without one (CONTRACT §6.1 leaves it open). */
export const DEFAULT_CATEGORY_NAME = 'Other';

/** What `open` needs of a resolved export, kept out of the callers' sight. */
interface OpenPlan {
  readonly list: PriceListRecord;
  readonly storeId: string;
  readonly writer: ExportWriter;
  readonly onlyAvailable: boolean;
  meta(): ExportMeta;
}

/** The export use case over a database and the writers it was composed with. */
export interface ExportService {
  /** The formats of the price list addresses, in the registry's order. */
  readonly formats: readonly string[];
  /** Checks the profile (404), then the list (404), in CONTRACT §3's order; reads the profile once. */
  resolve(subject: ExportSubject, request: ExportRequest): Promise<ResolvedExport>;
  /** The file's bytes, rendered by the variant's writer from the list (read as the writer goes). */
  open(resolved: ResolvedExport): AsyncIterable<Uint8Array>;
}

export function createExportService({ db, writers }: { db: Database; writers: ExportWriters }): ExportService {
  const formats = Object.freeze(Object.keys(writers.formats));
  const plans = new WeakMap<ResolvedExport, OpenPlan>();

  const writerFor = (request: ExportRequest): ExportWriter => {
    if (request.endpoint === 'summary') return writers.summary;
    const writer = writers.formats[request.format ?? 'csv'];
    if (!writer) throw new AppError('invalid_parameter', `format must be one of ${formats.join(', ')} (any case)`);
    return writer;
  };

  async function resolve(subject: ExportSubject, request: ExportRequest): Promise<ResolvedExport> {
    const writer = writerFor(request);
    const profile = request.profileId === null ? null : await getProfileForStore(db, subject.store.id, request.profileId);
    if (!subject.list) throw new AppError('price_list_not_found', 'this store has not published a price list yet');
    // version=N: after the profile (CONTRACT §3's 404 order); its own list id, so its own ETag.
    const list = request.version == null ? subject.list : await retainedVersion(db, subject.store.id, subject.list, request.version);
    const store = subject.store;
    let meta: ExportMeta | undefined;
    // Built on first use: a 304 needs none of it.
    const metaOnce = () => (meta ??= exportMeta(store, list, profile, request.onlyAvailable));
    const resolved: ResolvedExport = {
      variant: {
        endpoint: request.endpoint,
        storeId: store.id,
        priceListId: list.id,
        version: list.version,
        format: writer.format,
        profileId: profile?.id ?? null,
        profileRevision: profile?.revision ?? null,
        onlyAvailable: request.onlyAvailable,
      },
      lastModified: profile && profile.updated_at > list.published_at ? profile.updated_at : list.published_at,
      fileName: () => exportFileName(store.id, list.published_at, writer.extension, writer.fileSuffix),
      contentType: () => writer.contentType(metaOnce()),
    };
    plans.set(resolved, { list, storeId: store.id, writer, onlyAvailable: request.onlyAvailable, meta: metaOnce });
    return resolved;
  }

  async function* open(resolvedExport: ResolvedExport): AsyncGenerator<Uint8Array> {
    const plan = plans.get(resolvedExport);
    if (!plan) throw new Error('open() takes an export this service resolved');
    const { list, writer, onlyAvailable } = plan;
    const base = plan.meta();
    const meta = writer.needs.categories ? { ...base, categories: await exportCategories(db, plan.storeId, list.category_ids) } : base;
    const readOptions = {
      onlyAvailable,
      withExtra: !(writer.needs.fields === 'columns' && readsLegacyFieldsOnly(meta.columns)),
    };
    // Iterable more than once, each time from the start: a writer may read the list in several passes.
    const items: AsyncIterable<readonly PriceItem[]> = { [Symbol.asyncIterator]: () => db.priceLists.readItems(list.items_list_id, readOptions)[Symbol.asyncIterator]() };
    if (takesRecordSource(writer)) {
      const records: RecordReader = (spec) => db.priceLists.renderRecords(list.items_list_id, spec, { onlyAvailable });
      yield* writer.render(items, meta, records);
    } else {
      yield* writer.render(items, meta);
    }
    // Red-team #20.4: a version swept while it was read (a download that outlived the grace of
    // a superseded list) has lost rows under the reader, and the writer has closed a shorter file
    // that looks whole. A list's row is deleted before its rows (store/sql/purge.ts), so if it is
    // still there now, nothing was missing; if not, the render fails and the answer is cut without
    // its end (the render cache keeps no file of a failed render).
    if (!(await db.priceLists.exists(list.id))) throw new ListGoneWhileReadError(list.version);
  }

  return {
    formats,
    resolve,
    open,
  };
}

function exportMeta(owner: StoreRecord, list: PriceListRecord, profile: Profile | null, onlyAvailable: boolean): ExportMeta {
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
async function exportCategories(db: Database, storeId: string, ids: readonly number[]): Promise<ExportCategory[]> {
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
const readsLegacyFieldsOnly = (columns: ExportMeta['columns']): boolean => columns.every((c) => c.field === null || LEGACY_FIELDS.has(c.field));

const depth = (path: string): number => (path === '' ? 0 : path.split(' / ').length);
