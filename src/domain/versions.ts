import { AppError } from '../errors/app-error.js';
import type { PublicationDiff, VersionSummary } from '../model/versions.js';
import type { PriceListRecord, QuarantinedItem, Database, VersionRow } from '../store/types.js';
import { diffWithoutGuard } from './guard.js';
import { getStoreOrFail } from './stores.js';

/*
 * CONTRACT §10's operations on versions: serving an older one, listing them, releasing or
 * discarding a held one, releasing quarantined items and rolling back. Each change ends with a
 * sweep that deletes what fell out of retention (in the writer's process, never on a fetcher's
 * request).
 */

/** A version as `/api/me` and `price-export versions` list it. */
export function versionSummary(row: VersionRow): VersionSummary {
  return {
    version: row.list.version,
    published_at: row.list.published_at,
    item_count: row.list.item_count,
    available_count: row.list.available_count,
    state: row.held ? 'held' : row.latest ? 'latest' : 'retained',
    source: row.source,
    diff: row.diff === null ? null : (JSON.parse(row.diff) as PublicationDiff),
  };
}

/** The store's retained and held versions, newest first; store_not_found for an unknown store. */
export async function listVersions(db: Database, storeId: string): Promise<VersionSummary[]> {
  await getStoreOrFail(db, storeId);
  return storeVersions(db, storeId);
}

/** The same for a store known to exist (a key holder's). */
export async function storeVersions(db: Database, storeId: string): Promise<VersionSummary[]> {
  return (await db.versions.listVersions(storeId)).map(versionSummary);
}

/**
 * The key holder's request for `version=N` (addresses 2 and 4): that retained version's list.
 * Unknown, deleted and held versions all answer 404 version_not_found.
 */
export async function retainedVersion(db: Database, storeId: string, latest: PriceListRecord, version: number): Promise<PriceListRecord> {
  if (latest.version === version) return latest;
  const row = await db.versions.getVersion(storeId, version);
  if (!row || row.held) throw new AppError('version_not_found', `version ${version} of this price list is unknown, no longer kept, or held`);
  return row.list;
}

/** What a change of the latest answers: the new latest and its diff against the one before. */
export interface VersionChange {
  list: PriceListRecord;
  diff: PublicationDiff;
  /** A rollback's: the version whose items it serves again. */
  restored?: number;
}

async function heldVersion(db: Database, storeId: string, version: number): Promise<void> {
  await getStoreOrFail(db, storeId);
  const row = await db.versions.getVersion(storeId, version);
  if (!row) throw new AppError('version_not_found', `store "${storeId}" has no version ${version} (unknown or no longer kept)`);
  if (!row.held) throw new AppError('version_not_held', `version ${version} of store "${storeId}" is not held; only a held version can be released or discarded`);
}

/** `publication release`: the held version becomes the latest, as it was published. */
export async function releaseHeld(db: Database, storeId: string, version: number, keepVersions: number): Promise<VersionChange> {
  await heldVersion(db, storeId, version);
  const list = await db.versions.releaseHeld(storeId, version, keepVersions);
  if (!list) throw new AppError('version_not_held', `version ${version} of store "${storeId}" is no longer held`);
  const row = await db.versions.getVersion(storeId, version);
  await sweep(db, storeId);
  return { list, diff: JSON.parse(row!.diff ?? 'null') as PublicationDiff };
}

/** `publication discard`: the held version is dropped; nothing served changes. */
export async function discardHeld(db: Database, storeId: string, version: number): Promise<void> {
  await heldVersion(db, storeId, version);
  if (!(await db.versions.discardHeld(storeId, version))) throw new AppError('version_not_held', `version ${version} of store "${storeId}" is no longer held`);
  await sweep(db, storeId);
}

/**
 * `rollback`: version `to` (default: the newest retained version before the latest) is
 * published again as a new version with source rollback, serving the same rows (none copied).
 * No guard. Its diff against the latest it replaces is computed after it is served.
 */
export async function rollback(db: Database, storeId: string, to: number | null, keepVersions: number): Promise<VersionChange> {
  await getStoreOrFail(db, storeId);
  const versions = await db.versions.listVersions(storeId);
  const latest = versions.find((v) => v.latest)?.list ?? null;
  if (!latest) throw new AppError('price_list_not_found', `store "${storeId}" has not published a price list yet`);
  let target = to;
  if (target === null) {
    const before = versions.find((v) => !v.held && !v.latest && v.list.version < latest.version);
    if (!before) throw new AppError('version_not_found', `store "${storeId}" keeps no version before the latest (${latest.version}) to roll back to`);
    target = before.list.version;
  }
  if (target === latest.version) throw new AppError('version_is_latest', `version ${target} is already the latest of store "${storeId}"`);
  const list = await db.versions.rollback(storeId, target, keepVersions);
  if (!list) throw new AppError('version_not_found', `store "${storeId}" has no version ${target} to roll back to (unknown, no longer kept, or held)`);
  const diff = await diffWithoutGuard(db, list, latest);
  await db.versions.setDiff(list.id, JSON.stringify(diff));
  await sweep(db, storeId);
  return { list, diff, restored: target };
}

/** Quarantined items listed at most by `quarantine show`. */
const SHOWN_QUARANTINE = 100;

/** The latest version's quarantined items (the first 100) and their count. */
export async function showQuarantine(db: Database, storeId: string): Promise<{ count: number; items: QuarantinedItem[] }> {
  await getStoreOrFail(db, storeId);
  return db.versions.pendingQuarantine(storeId, SHOWN_QUARANTINE);
}

/** `quarantine release`: the new values of `offers` (null: every quarantined item) published as a new version. */
export async function releaseQuarantine(db: Database, storeId: string, offers: readonly string[] | null, keepVersions: number): Promise<VersionChange> {
  await getStoreOrFail(db, storeId);
  const before = await db.priceLists.latest(storeId);
  const unique = offers === null ? null : [...new Set(offers)];
  const { list, missing } = await db.versions.releaseQuarantine(storeId, unique, keepVersions);
  if (!list) {
    throw new AppError('not_quarantined', missing.length > 0
      ? `not quarantined in the latest version of store "${storeId}": ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ` and ${missing.length - 20} more` : ''}; nothing was released`
      : `the latest version of store "${storeId}" has no quarantined items`);
  }
  const diff = await diffWithoutGuard(db, list, before);
  await db.versions.setDiff(list.id, JSON.stringify(diff));
  await sweep(db, storeId);
  return { list, diff };
}

/**
 * Deletes versions out of retention past the grace period. A failure here never undoes the
 * change that came before it: the next change sweeps again.
 */
export async function sweep(db: Database, storeId: string): Promise<void> {
  await db.versions.sweep(storeId).catch(() => undefined);
}
