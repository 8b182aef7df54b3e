import { AppError } from '../errors/app-error.js';
import { formatMoney } from '../model/money.js';
import {
  DEFAULT_GUARD, LIST_LEVEL_CHECKS, MAX_OFFENDERS, type GuardCheck, type GuardPolicy, type PublicationDiff, type TrippedCheck,
} from '../model/versions.js';
import type { ItemCheck, ListCounts, PriceListRecord, RawOffender, Database } from '../store/types.js';
import { getStoreOrFail } from './stores.js';

/** The range of each numeric guard value (whole numbers). */
export const GUARD_RANGES: Record<Exclude<keyof GuardPolicy, 'zero_price'>, readonly [min: number, max: number]> = {
  max_removed_pct: [0, 100],
  max_price_drop_pct: [0, 100],
  max_price_rise_pct: [0, 1_000_000],
  min_items: [1, 100_000_000],
};

/**
 * Checks a change to a guard policy (from `guard set` or the internal API): every value is
 * named in one error when out of range. Numbers may come as text (the command line).
 */
export function parseGuardChange(input: Record<string, unknown>): Partial<GuardPolicy> {
  const change: Partial<GuardPolicy> = {};
  const problems: string[] = [];
  for (const [name, [min, max]] of Object.entries(GUARD_RANGES) as [keyof typeof GUARD_RANGES, readonly [number, number]][]) {
    const raw = input[name];
    if (raw === undefined || raw === null) continue;
    const value = typeof raw === 'string' && /^\d{1,12}$/.test(raw) ? Number(raw) : raw;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max}`);
      continue;
    }
    change[name] = value;
  }
  const zero = input.zero_price;
  if (zero !== undefined && zero !== null) {
    if (zero === 'hold' || zero === 'allow') change.zero_price = zero;
    else problems.push('zero_price must be hold or allow');
  }
  if (problems.length > 0) throw new AppError('invalid_guard', `${problems.join('; ')}; nothing was changed`);
  return change;
}

/** The store's guard policy: its own, or the defaults. */
export async function getGuard(db: Database, storeId: string): Promise<GuardPolicy> {
  await getStoreOrFail(db, storeId);
  return (await db.versions.getGuard(storeId)) ?? { ...DEFAULT_GUARD };
}

/** Changes some of the store's guard values (the rest keep theirs) and answers the whole policy. */
export async function setGuard(db: Database, storeId: string, input: Record<string, unknown>): Promise<GuardPolicy> {
  const change = parseGuardChange(input);
  const policy = { ...(await getGuard(db, storeId)), ...change };
  await db.versions.putGuard(storeId, policy);
  return policy;
}

const money = (cents: number | null) => (cents === null ? null : formatMoney(cents));
const offendersOf = (raw: RawOffender[]) => raw.map((o) => ({ offer_id: o.offer_id, old_price: money(o.old_price), new_price: money(o.new_price) }));

/**
 * Compares the items of `newItems` (a draft, or a version's rows) with `old` by offer_id in the
 * database, judges them by `policy` (CONTRACT §10's table) and lists the first offenders of
 * each tripped check. `force` publishes whatever trips, but the diff still says what tripped.
 */
export async function judge(db: Database, newItems: number, old: PriceListRecord | null, policy: GuardPolicy, force = false, draftCount?: number): Promise<PublicationDiff> {
  // A publication's draft (its item count known): the comparison also records its changes (CONTRACT §11).
  const counts: ListCounts = draftCount === undefined
    ? await db.versions.compare(newItems, old?.items_list_id ?? null, policy)
    : await db.versions.compareDraft(newItems, old && { items: old.items_list_id, count: old.item_count }, draftCount, policy);
  const oldCount = old?.item_count ?? 0;
  const removed = oldCount - counts.matched;
  const trips: [GuardCheck, number, number | string][] = [];
  // More than max_removed_pct % of latest's items, in whole numbers: removed / old > pct / 100.
  if (old && removed * 100 > policy.max_removed_pct * oldCount) trips.push(['removed', removed, policy.max_removed_pct]);
  if (counts.price_drop > 0) trips.push(['price_drop', counts.price_drop, policy.max_price_drop_pct]);
  if (counts.price_rise > 0) trips.push(['price_rise', counts.price_rise, policy.max_price_rise_pct]);
  // A store's first list has nothing to compare with: only its size is judged (a zero price there is the store's baseline).
  if (old && counts.zero_price > 0) trips.push(['zero_price', counts.zero_price, policy.zero_price]);
  if (counts.new_items < policy.min_items) trips.push(['size', counts.new_items, policy.min_items]);

  const tripped: TrippedCheck[] = [];
  for (const [check, count, limit] of trips) {
    const offenders = check === 'size' || !old && check === 'removed'
      ? []
      : offendersOf(await db.versions.offenders(newItems, old?.items_list_id ?? -1, check as ItemCheck, policy, MAX_OFFENDERS));
    tripped.push({ check, count, limit, offenders });
  }
  const held = tripped.some((t) => LIST_LEVEL_CHECKS.includes(t.check));
  return {
    compared_with: old?.version ?? null,
    added: counts.new_items - counts.matched,
    removed,
    price_up: counts.price_up,
    price_down: counts.price_down,
    unchanged: counts.unchanged,
    verdict: force || tripped.length === 0 ? 'published' : held ? 'held' : 'published_with_quarantine',
    forced: force,
    tripped,
  };
}

/** The diff of a version made without the guard (a rollback, a release): counts only. */
export async function diffWithoutGuard(db: Database, list: PriceListRecord, old: PriceListRecord | null): Promise<PublicationDiff> {
  const counts = await db.versions.compare(list.items_list_id, old?.items_list_id ?? null, DEFAULT_GUARD);
  return {
    compared_with: old?.version ?? null,
    added: counts.new_items - counts.matched,
    removed: (old?.item_count ?? 0) - counts.matched,
    price_up: counts.price_up,
    price_down: counts.price_down,
    unchanged: counts.unchanged,
    verdict: 'published',
    forced: false,
    tripped: [],
  };
}
