/*
 * The protocol between `npm run bench` (bench/run.ts) and the standalone figure scripts in
 * bench/figures/. Each script measures its figures in alternating rounds (ours, reference,
 * ours, reference … or the reverse every other round, so both sides see the same load from
 * the rest of a shared machine) and prints one line per figure:
 *
 *   BENCH-RESULT {"figure": …, "unit": …, "ours": [...], "reference": [...], …}
 *
 * run.ts runs every script in bench/figures/ (or those named by --only), reads these lines and
 * writes each figure as the median of the per-round ratios with their min–max — never the
 * best round.
 */

export interface BenchResult {
  /** What is measured, as a reader of RESULTS.md should see it. */
  figure: string;
  /** Unit of `ours` and `reference`, e.g. "items/s", "req/s", "s", "MiB". */
  unit: string;
  /** true when a bigger number is better (throughput); false for times, bytes, memory. */
  higherIsBetter: boolean;
  /** One value per round, in the order measured. */
  ours: number[];
  /** The reference's value in the same rounds (same length as ours); empty when there is none. */
  reference: number[];
  /** What the reference is, e.g. "sqlite3 .import of the same items as CSV". */
  referenceName: string;
  /** The goal as text, e.g. "≥ 1.0×", "≤ 2 % of the full export's bytes", "< 5 s". */
  goal: string;
  /** Decided by the script: met only when every round is on the goal's side (metInEveryRound). */
  met: boolean;
  /** Anything a reader needs: sizes, the machine's load, what limits the figure. */
  notes?: string;
}

export const RESULT_PREFIX = 'BENCH-RESULT ';

/**
 * Whether every round is on the goal's side: ≥ `goal` when higher is better, else ≤ `goal`. A
 * figure whose median passes while a round of it does not is on its goal line, and that is not met.
 */
export function metInEveryRound(rounds: readonly number[] | Spread, goal: number, higherIsBetter = true): boolean {
  const { min, max } = 'min' in rounds ? rounds : { min: Math.min(...rounds), max: Math.max(...rounds) };
  if (!Number.isFinite(min) || !Number.isFinite(max)) return false;
  return higherIsBetter ? min >= goal : max <= goal;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Ours ÷ reference per round, oriented so that > 1 means ours is better. */
export function roundRatios(result: Pick<BenchResult, 'ours' | 'reference' | 'higherIsBetter'>): number[] {
  return result.ours.map((ours, i) => (result.higherIsBetter ? ours / result.reference[i] : result.reference[i] / ours));
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/**
 * Runs `rounds` (at least 5) alternating rounds: even rounds measure ours first, odd rounds the
 * reference first. Each callback returns the round's value in the figure's unit.
 */
export async function alternatingRounds(
  rounds: number,
  ours: (round: number) => Promise<number>,
  reference: (round: number) => Promise<number>,
): Promise<{ ours: number[]; reference: number[] }> {
  const result = { ours: [] as number[], reference: [] as number[] };
  for (let round = 0; round < Math.max(5, rounds); round++) {
    if (round % 2 === 0) {
      result.ours.push(await ours(round));
      result.reference.push(await reference(round));
    } else {
      result.reference.push(await reference(round));
      result.ours.push(await ours(round));
    }
  }
  return result;
}

/** Prints the figure for run.ts (and a readable line for a person running the script alone). */
export function emitResult(result: BenchResult): void {
  if (result.reference.length > 0) {
    const ratio = spread(roundRatios(result));
    console.log(`${result.figure}: ${ratio.median.toFixed(3)}× (rounds ${ratio.min.toFixed(3)}–${ratio.max.toFixed(3)}), goal ${result.goal}, ${result.met ? 'met' : 'NOT met'}`);
  } else {
    const value = spread(result.ours);
    console.log(`${result.figure}: ${value.median} ${result.unit} (rounds ${value.min}–${value.max}), goal ${result.goal}, ${result.met ? 'met' : 'NOT met'}`);
  }
  console.log(RESULT_PREFIX + JSON.stringify(result));
}
