/**
 * The vocabulary of CONTRACT §10: versions, the publication guard and its verdicts, and the
 * diff every publication answers with. Plain types and constants; the rules live in
 * domain/guard.ts, the SQL in store/{sqlite,postgres}/versions-*.ts.
 */

/** The five checks of the guard table, in the order the contract lists them. */
export const GUARD_CHECKS = ['removed', 'price_drop', 'price_rise', 'zero_price', 'size'] as const;
export type GuardCheck = (typeof GUARD_CHECKS)[number];

/** List-level checks hold the whole publication; the others quarantine single items. */
export const LIST_LEVEL_CHECKS: readonly GuardCheck[] = ['removed', 'size'];

/** A store's guard policy. Percentages are whole numbers. */
export interface GuardPolicy {
  max_removed_pct: number;
  max_price_drop_pct: number;
  max_price_rise_pct: number;
  min_items: number;
  zero_price: 'hold' | 'allow';
}

export const DEFAULT_GUARD: Readonly<GuardPolicy> = Object.freeze({
  max_removed_pct: 20,
  max_price_drop_pct: 50,
  max_price_rise_pct: 100,
  min_items: 1,
  zero_price: 'hold',
});

export type Verdict = 'published' | 'published_with_quarantine' | 'held';
export type VersionState = 'latest' | 'retained' | 'held';
export type VersionSource = 'publish' | 'rollback';

/** One offending item: its offer_id and its price before and after (decimal text; null where absent). */
export interface Offender {
  offer_id: string;
  old_price: string | null;
  new_price: string | null;
}

export interface TrippedCheck {
  check: GuardCheck;
  /** Items that trip it (for `size`: the new list's item count). */
  count: number;
  /** The policy value it was judged against. */
  limit: number | string;
  /** The first 20 offenders in list order (empty for `size`). */
  offenders: Offender[];
}

/** What a publication answers with, and what is stored with its version (CONTRACT §10). */
export interface PublicationDiff {
  /** The version compared with (the latest before this publication); null for a store's first. */
  compared_with: number | null;
  added: number;
  removed: number;
  price_up: number;
  price_down: number;
  /** Offers in both lists whose price did not change (other fields may have). */
  unchanged: number;
  verdict: Verdict;
  /** True when `--force` skipped the guard; `tripped` still says what would have tripped. */
  forced: boolean;
  tripped: TrippedCheck[];
}

/** A retained or held version, as `/api/me` and `price-export versions` list it. */
export interface VersionSummary {
  version: number;
  published_at: Date;
  item_count: number;
  available_count: number;
  state: VersionState;
  source: VersionSource;
  diff: PublicationDiff | null;
}

/** Items per check listed in a diff. */
export const MAX_OFFENDERS = 20;

/** HISTORY_VERSIONS when not configured: published versions kept per store. */
export const DEFAULT_HISTORY_VERSIONS = 10;
