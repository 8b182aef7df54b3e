/**
 * The figures of the summary matrix (CONTRACT §7), free of any file format: competitor order,
 * per-product min/avg/max/rank/gap, and the Summary's per-competitor and store totals.
 *
 * Money stays in integer minor units; only ratios (averages, indices, percentages) are floats.
 *
 * A product should name each competitor once. If one is named twice, its first entry counts
 * and the others are ignored everywhere (matrix cell, min/avg/max, rank, Offers, Summary), so
 * that every sheet tells the same story.
 */
import type { Cents } from '../model/money.js';
import type { Competitor, PriceItem } from '../model/price-item.js';

export type Comparison = 'cheaper' | 'equal' | 'dearer';

/** How a competitor's price stands against ours: `cheaper` means theirs is below ours. */
export function compareToOurs(theirs: Cents, ours: Cents): Comparison {
  return theirs < ours ? 'cheaper' : theirs > ours ? 'dearer' : 'equal';
}

/** The item's competitors, each name once (its first entry), in the order the item lists them. */
export function distinctCompetitors(item: PriceItem): Competitor[] {
  const competitors = item.competitors;
  if (!competitors || competitors.length === 0) return [];
  if (competitors.length === 1) return competitors;
  const seen = new Set<string>();
  const distinct: Competitor[] = [];
  for (const competitor of competitors) {
    if (seen.has(competitor.name)) continue;
    seen.add(competitor.name);
    distinct.push(competitor);
  }
  return distinct;
}

/**
 * `part ÷ whole × 100` rounded to two decimals, half away from zero, computed on integers so
 * that 1.005 % does not print as 1.00 %. Null when `whole` is 0.
 */
export function percentOf(part: Cents, whole: Cents): number | null {
  if (whole === 0) return null;
  // Hundredths of a percent = |part| × 10 000 ÷ |whole|, divided exactly: the float quotient
  // only seeds the integer one, and the remainder decides the rounding.
  const numerator = Math.abs(part) * 10_000;
  const denominator = Math.abs(whole);
  let quotient = Math.floor(numerator / denominator);
  let remainder = numerator - quotient * denominator;
  if (remainder < 0) {
    quotient -= 1;
    remainder += denominator;
  } else if (remainder >= denominator) {
    quotient += 1;
    remainder -= denominator;
  }
  const hundredths = 2 * remainder >= denominator ? quotient + 1 : quotient;
  const sign = Math.sign(part) * Math.sign(whole);
  return (sign * hundredths) / 100 || 0; // `|| 0`: no -0 for a difference that rounds away
}

export interface ProductFigures {
  /** Competitors pricing the product. */
  count: number;
  min: Cents | null;
  max: Cents | null;
  /** Mean of the competitors' prices, in (fractional) minor units. */
  avg: number | null;
  /** 1 + competitors strictly cheaper than us; null without competitors. */
  rank: number | null;
  /** (ours − min) ÷ min × 100, two decimals; null without competitors or when min is 0. */
  gapToMinPercent: number | null;
}

/** Min/avg/max/rank/gap of one product; every competitor price counts, whatever its availability. */
export function productFigures(ourPrice: Cents, competitors: readonly Competitor[]): ProductFigures {
  if (competitors.length === 0) return { count: 0, min: null, max: null, avg: null, rank: null, gapToMinPercent: null };
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let cheaper = 0;
  for (const { price } of competitors) {
    if (price < min) min = price;
    if (price > max) max = price;
    sum += price;
    if (price < ourPrice) cheaper += 1;
  }
  return {
    count: competitors.length,
    min,
    max,
    avg: sum / competitors.length,
    rank: 1 + cheaper,
    gapToMinPercent: percentOf(ourPrice - min, min),
  };
}

/** Difference of our price to a competitor's: positive when we are dearer. */
export interface PriceDifference {
  /** ours − theirs. */
  amount: Cents;
  /** (ours − theirs) ÷ theirs × 100, two decimals; null when theirs is 0. Against the cheapest competitor this is `gap_to_min_%`. */
  percent: number | null;
}

export function priceDifference(ours: Cents, theirs: Cents): PriceDifference {
  return { amount: ours - theirs, percent: percentOf(ours - theirs, theirs) };
}

export interface CompetitorSummary {
  name: string;
  productsPriced: number;
  cheaper: number;
  equal: number;
  dearer: number;
  /**
   * Mean of their price ÷ ours × 100 over the products they price, leaving out products we
   * sell at 0 (the ratio has no value there); null when nothing is left. Below 100: they are
   * cheaper on average.
   */
  priceIndex: number | null;
}

export interface StoreSummary {
  products: number;
  productsWithCompetitorPrices: number;
  /** Products with competitor prices where no competitor is strictly cheaper than us. */
  productsRankedFirst: number;
  /**
   * Mean over products with competitor prices of our price ÷ their average × 100, leaving out
   * products whose competitors all price at 0; null when nothing is left. Above 100: we are dearer than the market.
   */
  marketIndex: number | null;
}

export interface MatrixSummary {
  /** Competitors ordered by products priced, most first, then by name (code-unit order, locale-independent). */
  competitors: CompetitorSummary[];
  store: StoreSummary;
}

interface CompetitorTally {
  productsPriced: number;
  cheaper: number;
  equal: number;
  dearer: number;
  indexSum: number;
  indexCount: number;
}

/**
 * Reads the products one at a time (the first pass over the list) and keeps only a tally per
 * competitor: memory grows with the number of competitors, not of products.
 */
export class MatrixSummaryBuilder {
  private readonly tallies = new Map<string, CompetitorTally>();
  private products = 0;
  private withCompetitors = 0;
  private rankedFirst = 0;
  private marketIndexSum = 0;
  private marketIndexCount = 0;

  add(item: PriceItem): void {
    this.products += 1;
    const competitors = distinctCompetitors(item);
    if (competitors.length === 0) return;
    const ours = item.price;
    const figures = productFigures(ours, competitors);
    this.withCompetitors += 1;
    if (figures.rank === 1) this.rankedFirst += 1;
    if (figures.avg !== null && figures.avg > 0) {
      this.marketIndexSum += (ours / figures.avg) * 100;
      this.marketIndexCount += 1;
    }
    for (const { name, price } of competitors) {
      let tally = this.tallies.get(name);
      if (!tally) {
        tally = { productsPriced: 0, cheaper: 0, equal: 0, dearer: 0, indexSum: 0, indexCount: 0 };
        this.tallies.set(name, tally);
      }
      tally.productsPriced += 1;
      tally[compareToOurs(price, ours)] += 1;
      if (ours > 0) {
        tally.indexSum += (price / ours) * 100;
        tally.indexCount += 1;
      }
    }
  }

  result(): MatrixSummary {
    const competitors = [...this.tallies].map(
      ([name, t]): CompetitorSummary => ({
        name,
        productsPriced: t.productsPriced,
        cheaper: t.cheaper,
        equal: t.equal,
        dearer: t.dearer,
        priceIndex: t.indexCount > 0 ? t.indexSum / t.indexCount : null,
      }),
    );
    competitors.sort((a, b) => b.productsPriced - a.productsPriced || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return {
      competitors,
      store: {
        products: this.products,
        productsWithCompetitorPrices: this.withCompetitors,
        productsRankedFirst: this.rankedFirst,
        marketIndex: this.marketIndexCount > 0 ? this.marketIndexSum / this.marketIndexCount : null,
      },
    };
  }
}
