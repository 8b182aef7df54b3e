import { LEGACY_COLUMNS } from '../model/columns.js';
import { FeedCheckTally, type FeedCheckResult } from '../model/feed-check.js';
import { FEED_CHECK_TARGETS, feedRules, type FeedCheckTarget } from '../model/feed-rules.js';
import type { KeyLookup, Store } from '../store/types.js';
import { planExport } from './exports.js';

export interface FeedCheckRequest {
  target: FeedCheckTarget;
  onlyAvailable: boolean;
  profileId: number | null;
}

/**
 * GET /api/export/check (CONTRACT §14): one target's rules over the latest list as that export
 * would read it (profile 404 and price list 404 as for the export), streamed a batch at a time.
 */
export async function checkFeed(store: Store, lookup: KeyLookup, request: FeedCheckRequest): Promise<FeedCheckResult & { version: number }> {
  // The rules read fields beyond the columns (description, barcode…): every field is read.
  const plan = await planExport(store, lookup, { onlyAvailable: request.onlyAvailable, profileId: request.profileId, columnsOnly: false });
  const tally = new FeedCheckTally(feedRules(request.target, plan.meta.columns), plan.meta.store);
  for await (const batch of plan.readBatches()) for (const item of batch) tally.add(item);
  return { ...tally.result(), version: plan.meta.priceList.version };
}

/** Every target's check over items as publishing reads them (legacy columns, no filter): publish's warnings. */
export function publicationTallies(store: { name: string }): FeedCheckTally[] {
  return FEED_CHECK_TARGETS.map((target) => new FeedCheckTally(feedRules(target, LEGACY_COLUMNS), store));
}
