import { AppError } from '../errors/app-error.js';
import { LEGACY_COLUMNS, profileColumns } from '../model/columns.js';
import { FeedCheckTally, type FeedCheckResult } from '../model/feed-check.js';
import { FEED_CHECK_TARGETS, feedRules, type FeedCheckTarget } from '../model/feed-rules.js';
import type { KeyLookup, Database } from '../store/types.js';
import { getProfileForStore } from './profiles.js';

export interface FeedCheckRequest {
  target: FeedCheckTarget;
  onlyAvailable: boolean;
  profileId: number | null;
}

/**
 * GET /api/export/check (CONTRACT §14): one target's rules over the latest list as that export
 * would read it (profile 404 and price list 404 as for the export), streamed a batch at a time.
 */
export async function checkFeed(db: Database, lookup: KeyLookup, request: FeedCheckRequest): Promise<FeedCheckResult & { version: number }> {
  // The same checks in the same order as the export (CONTRACT §3): profile 404, then list 404.
  const profile = request.profileId === null ? null : await getProfileForStore(db, lookup.store.id, request.profileId);
  const list = lookup.latest;
  if (!list) throw new AppError('price_list_not_found', 'this store has not published a price list yet');
  const columns = profile ? profileColumns(profile.columns) : LEGACY_COLUMNS;
  const tally = new FeedCheckTally(feedRules(request.target, columns), lookup.store);
  // The rules read fields beyond the columns (description, barcode…): every field is read.
  // items_list_id: a rollback version serves another list's rows (CONTRACT §10), as the export reads them.
  for await (const batch of db.priceLists.readItems(list.items_list_id, { onlyAvailable: request.onlyAvailable, withExtra: true })) for (const item of batch) tally.add(item);
  return { ...tally.result(), version: list.version };
}

/** Every target's check over items as publishing reads them (legacy columns, no filter): publish's warnings. */
export function publicationTallies(store: { name: string }): FeedCheckTally[] {
  return FEED_CHECK_TARGETS.map((target) => new FeedCheckTally(feedRules(target, LEGACY_COLUMNS), store));
}
