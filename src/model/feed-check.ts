import type { PriceItem } from './price-item.js';
import type { FeedCheckTarget, FeedRules } from './feed-rules.js';

/** The first offenders listed per rule (CONTRACT §14); the count covers them all. */
export const MAX_LISTED_OFFENDERS = 20;

export interface FeedOffender {
  /** null for a store-level rule (the shop name). */
  offer_id: string | null;
  value: string;
}

export interface FeedRuleResult {
  rule: string;
  description: string;
  count: number;
  offenders: FeedOffender[];
}

export interface FeedCheckResult {
  format: FeedCheckTarget;
  /** Items checked (after the filter). */
  checked: number;
  rules: FeedRuleResult[];
}

/**
 * Runs one target's rules over items as they stream past: counts per rule and keeps the first
 * offenders, never the list.
 */
export class FeedCheckTally {
  private readonly results: FeedRuleResult[];
  private index = 0;

  constructor(private readonly rules: FeedRules, store: { name: string }) {
    this.results = [...rules.store, ...rules.items].map((rule) => ({ rule: rule.id, description: rule.description, count: 0, offenders: [] }));
    rules.store.forEach((rule, i) => {
      const value = rule.test(store);
      if (value !== null) this.offend(i, null, value);
    });
  }

  /** `index`: the item's position in the export, when items are not added in order (publishing's). */
  add(item: PriceItem, index = this.index): void {
    this.index++;
    const first = this.rules.store.length;
    const items = this.rules.items;
    for (let i = 0; i < items.length; i++) {
      const value = items[i].test(item, index);
      if (value !== null) this.offend(first + i, item.offer_id, value);
    }
  }

  /**
   * Adds `items` items already checked elsewhere (a store's native reader, publishing.ts): each
   * item rule's count of offenders, by rule id. No offender is listed for them: publishing
   * reports the counts only.
   */
  addCounted(items: number, countOf: (ruleId: string) => number): void {
    this.index += items;
    const first = this.rules.store.length;
    this.rules.items.forEach((rule, i) => {
      this.results[first + i].count += countOf(rule.id);
    });
  }

  /** The ids of the item rules, in order. */
  itemRuleIds(): string[] {
    return this.rules.items.map((rule) => rule.id);
  }

  result(): FeedCheckResult {
    return { format: this.rules.target, checked: this.index, rules: this.results };
  }

  private offend(at: number, offerId: string | null, value: string): void {
    const result = this.results[at];
    result.count++;
    if (result.offenders.length < MAX_LISTED_OFFENDERS) result.offenders.push({ offer_id: offerId, value });
  }
}

/** A warning of publish: one rule of one target that some items break. */
export interface FeedWarning {
  format: FeedCheckTarget;
  rule: string;
  description: string;
  count: number;
}

/** The rules with offenders, as publish's warnings. */
export const warningsOf = (results: readonly FeedCheckResult[]): FeedWarning[] =>
  results.flatMap((result) =>
    result.rules.filter((rule) => rule.count > 0).map((rule) => ({ format: result.format, rule: rule.rule, description: rule.description, count: rule.count })),
  );
