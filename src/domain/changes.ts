import { AppError } from '../errors/app-error.js';
import type { BuiltChanges, ChangeEntry, ChangesMeta, ChangesWriter } from '../model/changes-writer.js';
import { LEGACY_COLUMNS } from '../model/columns.js';
import type { PriceItem } from '../model/price-item.js';
import type { ChangeSpan, Database, PriceListRecord } from '../store/types.js';
import { exportCategories, exportFileName, exportLastModified, exportMeta, ListGoneWhileReadError } from './export-meta.js';
import type { ExportSubject, ResolvedExport } from './exports.js';
import { getProfileForStore } from './profiles.js';

/*
 * CONTRACT §11, the changes feed: the items of the latest version that were added or changed
 * since version N, and the offer_ids removed since N, judged by the values served (a
 * quarantined item by its served values) and by what the export shows (a profile's columns,
 * the filter). The store hands over only the offers recorded as touched between N and the
 * latest, with both rows (store/sql/changes.ts); this decides what each one is.
 */

export interface ChangesRequest {
  /** A changes writer's format; null: json. */
  format: string | null;
  onlyAvailable: boolean;
  profileId: number | null;
  /** A positive integer (checked by the caller). */
  since: number;
}

/** The offer_id column a changes answer always carries, so every line says which item it is. */
const OFFER_ID_COLUMN = LEGACY_COLUMNS[0];

export async function planChanges(
  db: Database,
  writers: Readonly<Record<string, ChangesWriter>>,
  subject: ExportSubject,
  request: ChangesRequest,
): Promise<{ resolved: ResolvedExport; render: () => AsyncIterable<Uint8Array> }> {
  const formats = Object.keys(writers);
  const writer = writers[request.format ?? formats[0]];
  if (!writer) throw new AppError('invalid_parameter', `format must be one of ${formats.join(', ')} (any case)`);
  const store = subject.store;
  const profile = request.profileId === null ? null : await getProfileForStore(db, store.id, request.profileId);
  if (subject.list === null) throw new AppError('price_list_not_found', 'this store has not published a price list yet');
  const latest: PriceListRecord = subject.list;
  const { since } = request;
  if (since > latest.version) {
    throw new AppError('invalid_parameter', `since must be a version up to the latest, ${latest.version}`);
  }
  const span = await db.changes.span(store.id, since, latest.version);
  const found = since === latest.version ? latest : (await db.versions.getVersion(store.id, since))?.list;
  if (!span || !found) {
    throw new AppError('since_too_old', `version ${since} is no longer kept (or predates the changes feed): download the whole list, then ask for changes since its version`);
  }
  const spanned: ChangeSpan = span;
  const base: PriceListRecord = found;

  const resolved: ResolvedExport = {
    variant: {
      endpoint: 'changes',
      storeId: store.id,
      priceListId: latest.id,
      version: latest.version,
      format: writer.format,
      profileId: profile?.id ?? null,
      profileRevision: profile?.revision ?? null,
      onlyAvailable: request.onlyAvailable,
      since,
    },
    lastModified: exportLastModified(latest, profile),
    fileName: () => exportFileName(store.id, latest.published_at, writer.extension, `-changes-since-${since}`),
    contentType: () => writer.contentType(meta()),
  };

  // Built on first use: a 304 needs none of it.
  const meta = (): ChangesMeta => {
    const full = exportMeta(store, latest, profile, request.onlyAvailable);
    const columns = full.columns.some((c) => c.field === 'offer_id') ? full.columns : [OFFER_ID_COLUMN, ...full.columns];
    // A removed offer is printed with the values version N served: its currency too.
    const currencies = [...new Set([...latest.currencies, ...base.currencies])].sort();
    return { ...full, columns, priceList: { ...full.priceList, currencies }, since };
  };

  async function* render(): AsyncGenerator<Uint8Array> {
    const plain = meta();
    // A removed offer's category is one of version N's.
    const categoryIds = [...new Set([...latest.category_ids, ...base.category_ids])];
    const full = writer.needs.categories ? { ...plain, categories: await exportCategories(db, store.id, categoryIds) } : plain;
    const built = builtAnswer(writer.built?.(full) ?? null);
    yield* built ?? writer.render(changeEntries(db, store.id, spanned, base, latest, writer.sameShown(full), request.onlyAvailable), full);
    // As for a whole file (exports.ts): a version swept while it was read fails the answer.
    for (const list of [latest, base]) if (!(await db.priceLists.exists(list.id))) throw new ListGoneWhileReadError(list.version);
  }

  /** The answer from records the store builds, where the writer and the store both can (the same bytes; store/change-records.contract.test.ts). */
  function builtAnswer(built: BuiltChanges | null): AsyncIterable<Uint8Array> | null {
    if (built === null) return null;
    const records = db.changes.records(spanned, base.items_list_id, built, request.onlyAvailable);
    return records && built.render(records.changed, records.removed);
  }

  return { resolved, render };
}

/**
 * Removals kept in memory while the upserts stream, so that one pass over the touched offers
 * usually does: only an answer with more removals than this reads them again in a second pass.
 * Bounded, so memory never grows with the list (a wiped catalogue takes the second pass).
 */
export const REMOVALS_HELD = 20_000;

/** Removals handed to the writer per batch. */
const BATCH = 2_000;

/**
 * The upserts, then the deletes, in batches (a writer prints every upsert before the first
 * delete). An offer counts as present in a version when it is there and, with `only_available`,
 * available.
 */
async function* changeEntries(
  db: Database, storeId: string, span: ChangeSpan, base: PriceListRecord, latest: PriceListRecord,
  sameShown: (a: PriceItem, b: PriceItem) => boolean, onlyAvailable: boolean,
): AsyncGenerator<ChangeEntry[]> {
  const present = (item: PriceItem | null): item is PriceItem => item !== null && (!onlyAvailable || item.available);
  const touched = () => db.changes.candidates(storeId, span, base.items_list_id, latest.items_list_id);
  let removals: ChangeEntry[] | null = [];
  for await (const page of touched()) {
    const batch: ChangeEntry[] = [];
    for (const { before, after } of page) {
      if (present(after)) {
        if (!present(before) || !sameShown(before, after)) batch.push({ action: 'upsert', item: after });
      } else if (removals !== null && present(before)) {
        removals.push({ action: 'delete', item: before });
        if (removals.length > REMOVALS_HELD) removals = null;
      }
    }
    if (batch.length > 0) yield batch;
  }
  if (removals !== null) {
    for (let at = 0; at < removals.length; at += BATCH) yield removals.slice(at, at + BATCH);
    return;
  }
  for await (const page of touched()) {
    const batch: ChangeEntry[] = [];
    for (const { before, after } of page) if (!present(after) && present(before)) batch.push({ action: 'delete', item: before });
    if (batch.length > 0) yield batch;
  }
}
