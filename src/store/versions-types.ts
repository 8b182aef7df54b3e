/**
 * The storage seam of CONTRACT §10 (history, the guard, quarantine, rollback): `Store.versions`.
 * Every comparison and copy runs in the database; nothing here hands a list to JavaScript.
 */
import type { GuardPolicy, VersionSource } from '../model/versions.js';
import type { PriceListRecord } from './types.js';

/** The per-item checks' thresholds, as the SQL predicates take them. */
export type ItemThresholds = Pick<GuardPolicy, 'max_price_drop_pct' | 'max_price_rise_pct' | 'zero_price'>;

/** A new list's items compared with an old list's by offer_id, in one pass (counts only). */
export interface ListCounts {
  new_items: number;
  /** Offers in both lists. */
  matched: number;
  price_up: number;
  price_down: number;
  unchanged: number;
  /** Items tripping each per-item check (a zero price counts under zero_price only). */
  price_drop: number;
  price_rise: number;
  zero_price: number;
}

export type ItemCheck = 'removed' | 'price_drop' | 'price_rise' | 'zero_price';

/** An offending item with prices in minor units. */
export interface RawOffender {
  offer_id: string;
  old_price: number | null;
  new_price: number | null;
}

/** How a draft is committed once the guard has judged it. */
export interface CommitOutcome {
  /** Stored as a held version: not served, the latest stays. */
  hold: boolean;
  /** Quarantine the items these thresholds trip: they are served with their previous values. */
  quarantine: ItemThresholds | null;
  /** The diff (JSON) stored with the version. */
  diff: string;
  /** HISTORY_VERSIONS: published versions kept per store. */
  keepVersions: number;
}

/** A stored version of any state, with its record. */
export interface VersionRow {
  list: PriceListRecord;
  held: boolean;
  latest: boolean;
  source: VersionSource;
  /** The stored diff (JSON text), or null (a list published before versions existed). */
  diff: string | null;
}

/** A pending quarantined item: the previous (served) price and the proposed one. */
export interface QuarantinedItem extends RawOffender {
  check: Exclude<ItemCheck, 'removed'>;
}

export interface VersionStore {
  getGuard(storeId: string): Promise<GuardPolicy | null>;
  putGuard(storeId: string, policy: GuardPolicy): Promise<void>;

  /**
   * Counts of the items of list `newItems` against those of `oldItems` (ids whose rows are
   * compared: PriceListRecord.items_list_id, or a draft's id; null: no old list).
   */
  compare(newItems: number, oldItems: number | null, thresholds: ItemThresholds): Promise<ListCounts>;
  /**
   * The same counts for a publication's draft (`newCount` items) against the latest list
   * (`old`), and in the same pass its changes recorded for the changes feed (CONTRACT §11): the
   * offers it adds or changes and, if it removes any, those. The counts are read from those
   * offers alone, so the guard and the feed share one comparison.
   */
  compareDraft(draftId: number, old: { items: number; count: number } | null, newCount: number, thresholds: ItemThresholds): Promise<ListCounts>;
  /** The first `limit` offenders of one check, in list order (removed: the old list's order). */
  offenders(newItems: number, oldItems: number, check: ItemCheck, thresholds: ItemThresholds, limit: number): Promise<RawOffender[]>;

  /** A retained, latest or held version; null when unknown or deleted. */
  getVersion(storeId: string, version: number): Promise<VersionRow | null>;
  /** Retained, latest and held versions, newest first. */
  listVersions(storeId: string): Promise<VersionRow[]>;
  /** Stores the diff of a version made without an upload (a rollback). */
  setDiff(listId: number, diff: string): Promise<void>;

  /** Makes held `version` the latest; null when it is not held. */
  releaseHeld(storeId: string, version: number, keepVersions: number): Promise<PriceListRecord | null>;
  /** Drops held `version`; false when it is not held. */
  discardHeld(storeId: string, version: number): Promise<boolean>;
  /**
   * A new version serving the items of retained `version` (no rows copied), source rollback;
   * null when the version is not retained.
   */
  rollback(storeId: string, version: number, keepVersions: number): Promise<PriceListRecord | null>;

  /** The latest version's quarantined items, the first `limit` in list order, and their count. */
  pendingQuarantine(storeId: string, limit: number): Promise<{ count: number; items: QuarantinedItem[] }>;
  /**
   * Publishes the new values of quarantined `offers` (null: all) as a new version, by SQL.
   * `missing`: offers named that are not quarantined (then nothing is published and `list` is null).
   */
  releaseQuarantine(storeId: string, offers: readonly string[] | null, keepVersions: number): Promise<{ list: PriceListRecord | null; missing: string[] }>;

  /**
   * Deletes versions out of retention for longer than the grace period (and discarded ones),
   * in small batches; never items a kept version still serves.
   */
  sweep(storeId: string): Promise<void>;

  /**
   * `sweep` for every store with versions due, then the rows a crash left queued: a timer's work,
   * so a store that stops publishing does not keep its superseded rows. Returns the stores swept.
   */
  sweepDue(): Promise<number>;
}
