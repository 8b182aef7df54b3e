import { planExport, type ExportPlan, type ExportRequest } from '../domain/exports.js';
import type { Profile } from '../model/profile.js';
import { getProfileForStore } from '../domain/profiles.js';
import { lookupVersion } from '../domain/versions.js';
import type { KeyLookup, Store } from '../store/types.js';
import { exportFileName, type ExportFile, type ExportVariant } from './send-export.js';

/** What differs between the price list and the summary exports; the checks and validators do not. */
export interface ExportShape {
  endpoint: ExportVariant['endpoint'];
  format: string;
  extension: string;
  /** Appended to the store id in the file name (`-summary`). */
  fileSuffix?: string;
  /** The writer reads nothing but the columns (lets a legacy export skip each item's extra fields). */
  columnsOnly: boolean;
  render(plan: ExportPlan): { contentType: string; body: () => AsyncIterable<Uint8Array> };
}

/**
 * One export, checked (profile 404, then price list 404: CONTRACT §3) but not yet planned: a
 * 304 or a render cache hit needs only the variant, and planning (the categories, the meta)
 * happens on a miss. The routes and the warmer all build exports here, so they key the same variant.
 */
export async function checkedExport(store: Store, latestLookup: KeyLookup, request: ExportRequest, shape: ExportShape): Promise<ExportFile> {
  const profile = request.profileId === null ? null : await getProfileForStore(store, latestLookup.store.id, request.profileId);
  // version=N: after the profile (404 order of CONTRACT §3), in place of the latest; its own list id, so its own ETag.
  const lookup = request.version == null ? latestLookup : await lookupVersion(store, latestLookup, request.version);
  // Without a list, planning answers price_list_not_found (the domain's one wording of it).
  if (!lookup.latest) await planExport(store, lookup, request);
  const list = lookup.latest!;
  const variantOf = (planned: Profile | null): ExportVariant => ({
    endpoint: shape.endpoint,
    storeId: lookup.store.id,
    priceListId: list.id,
    version: list.version,
    format: shape.format,
    profileId: planned?.id ?? null,
    profileRevision: planned?.revision ?? null,
    onlyAvailable: request.onlyAvailable,
  });
  return {
    variant: variantOf(profile),
    // A profile edit changes the bytes too: Last-Modified must move with it, or a client that
    // revalidates with If-Modified-Since alone would keep the old columns.
    publishedAt: profile && profile.updated_at > list.published_at ? profile.updated_at : list.published_at,
    fileName: () => exportFileName(lookup.store.id, list.published_at, shape.extension, shape.fileSuffix),
    prepare: async () => {
      const plan = await planExport(store, lookup, { ...request, columnsOnly: shape.columnsOnly });
      return { variant: variantOf(plan.profile), ...shape.render(plan) };
    },
  };
}
