import { AppError } from '../errors/app-error.js';
import type { RecordReader } from '../model/record-spec.js';
import { takesRecordSource, type ExportMeta, type ExportWriter, type ExportWriters } from '../model/export-writer.js';
import type { PriceItem } from '../model/price-item.js';
import type { PriceListRecord, Database, StoreRecord } from '../store/types.js';
import { planChanges, type ChangesRequest } from './changes.js';
import { exportCategories, exportFileName, exportLastModified, exportMeta, ListGoneWhileReadError, readsLegacyFieldsOnly } from './export-meta.js';
import { getProfileForStore } from './profiles.js';
import { retainedVersion } from './versions.js';

/*
 * The one export path (issue #12): every address (2, 3, 4) and the cache warmer ask `resolve`
 * for what the validators need, and `open` for the bytes. The profile is read once, in
 * `resolve`, so the variant a response is tagged with is the variant its bytes are made of.
 */

/** What a caller asks for; the key check is the caller's (the warmer has no key). */
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
  endpoint: 'prices' | 'summary' | 'changes';
  storeId: string;
  priceListId: number;
  version: number;
  format: string;
  profileId: number | null;
  profileRevision: number | null;
  onlyAvailable: boolean;
  /** The changes feed's `since` (CONTRACT §11); absent for a whole file. */
  since?: number;
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

export { DEFAULT_CATEGORY_NAME, exportFileName, ListGoneWhileReadError } from './export-meta.js';

/** What `open` needs of a resolved export, kept out of the callers' sight. */
interface OpenPlan {
  readonly list: PriceListRecord;
  readonly storeId: string;
  readonly writer: ExportWriter;
  readonly onlyAvailable: boolean;
  meta(): ExportMeta;
}

/** How a resolved export's bytes are made: a whole file's plan, or the changes feed's. */
type Render = () => AsyncIterable<Uint8Array>;

/** The export use case over a database and the writers it was composed with. */
export interface ExportService {
  /** The formats of the price list addresses, in the registry's order. */
  readonly formats: readonly string[];
  /** Checks the profile (404), then the list (404), in CONTRACT §3's order; reads the profile once. */
  resolve(subject: ExportSubject, request: ExportRequest): Promise<ResolvedExport>;
  /** The formats of the changes address (CONTRACT §11), json first. */
  readonly changesFormats: readonly string[];
  /** The changes since a version (CONTRACT §11): format (400), profile (404), list (404), `since` (400, 410). */
  resolveChanges(subject: ExportSubject, request: ChangesRequest): Promise<ResolvedExport>;
  /** The file's bytes, rendered by the variant's writer from the list (read as the writer goes). */
  open(resolved: ResolvedExport): AsyncIterable<Uint8Array>;
}

export function createExportService({ db, writers }: { db: Database; writers: ExportWriters }): ExportService {
  const formats = Object.freeze(Object.keys(writers.formats));
  const changesWriters = writers.changes ?? {};
  const changesFormats = Object.freeze(Object.keys(changesWriters));
  const plans = new WeakMap<ResolvedExport, Render>();

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
      lastModified: exportLastModified(list, profile),
      fileName: () => exportFileName(store.id, list.published_at, writer.extension, writer.fileSuffix),
      contentType: () => writer.contentType(metaOnce()),
    };
    const plan: OpenPlan = { list, storeId: store.id, writer, onlyAvailable: request.onlyAvailable, meta: metaOnce };
    plans.set(resolved, () => renderFile(plan));
    return resolved;
  }

  async function resolveChanges(subject: ExportSubject, request: ChangesRequest): Promise<ResolvedExport> {
    const { resolved, render } = await planChanges(db, changesWriters, subject, request);
    plans.set(resolved, render);
    return resolved;
  }

  function open(resolvedExport: ResolvedExport): AsyncIterable<Uint8Array> {
    const render = plans.get(resolvedExport);
    if (!render) throw new Error('open() takes an export this service resolved');
    return render();
  }

  async function* renderFile(plan: OpenPlan): AsyncGenerator<Uint8Array> {
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
    changesFormats,
    resolveChanges,
    open,
  };
}

