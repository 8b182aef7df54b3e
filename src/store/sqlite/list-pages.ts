import { pageIndexSql as sharedPageIndexSql } from '../sheet-row-numbers.js';
import type { PageWorkers } from './store-threads.js';

/*
 * A list's items read a page of positions (seq) at a time by a one-value page query, on the
 * page threads, several pages at once, handed out in order. Pages are independent because a
 * published list never changes (a superseded one stays readable for SUPERSEDED_GRACE_MS).
 */

/** Positions per page: ~300 KiB of CSV records or ~1 MiB of JSON rows, ~3 ms of SQLite work. */
export const POSITIONS_PER_PAGE = 5000;
/** The first page is small, so the first bytes of an export go out after ~1 ms of SQLite work. */
export const FIRST_PAGE_POSITIONS = 1000;

/** The index of listPages' page that holds position `seq` of a list whose first position is `first`. */
export const pageIndexSql = (seq: string, first: string): string => sharedPageIndexSql(seq, first, FIRST_PAGE_POSITIONS, POSITIONS_PER_PAGE);

export interface PageQuery {
  /** One row, one column; sees `@list`, `@from` and `@to` (positions from ≤ seq < to) besides `params`. */
  sql: string;
  params: Record<string, unknown>;
}

export interface PageRunner {
  /** The page threads, or null to run the queries on this thread (an in-memory database). */
  workers: PageWorkers | null;
  runHere(sql: string, values: Record<string, unknown>): unknown;
}

/** One value of a query, on a page thread (or here, for an in-memory database). */
export function pageThreadValue<T>(runner: PageRunner, sql: string, values: Record<string, unknown>): Promise<T> {
  return runner.workers ? (runner.workers.run(sql, values) as Promise<T>) : Promise.resolve(runner.runHere(sql, values) as T);
}

/** A page's query, asked for each page as it is sent out, in order. */
export type PageQueryOf = (from: number, to: number) => PageQuery;

/**
 * The value of each page of `list` between its first and last position, in order; null pages (no
 * rows) are skipped. `query` may be one query for every page, or made for each page in turn.
 */
export async function* listPages<T>(runner: PageRunner, list: number, bounds: readonly [number | null, number | null], query: PageQuery | PageQueryOf): AsyncGenerator<T> {
  const [first, last] = bounds;
  if (first === null || last === null) return;
  const queryOf = typeof query === 'function' ? query : () => query;
  const page = (from: number, to: number): Promise<T | null> => {
    const { sql, params } = queryOf(from, to);
    const made = pageThreadValue<T | null>(runner, sql, { ...params, list, from, to });
    // Pages made ahead may fail while an earlier one is awaited: handled here, thrown when their turn comes.
    made.catch(() => undefined);
    return made;
  };
  // One page in flight per thread and one more, ready when the next is taken: every thread busy, memory bounded
  // (twice as many measured no faster, bench/run.ts first-csv).
  const ahead = runner.workers ? runner.workers.size + 1 : 1;
  const inFlight: Promise<T | null>[] = [];
  let next = first;
  for (;;) {
    while (inFlight.length < ahead && next <= last) {
      const to = next + (next === first ? FIRST_PAGE_POSITIONS : POSITIONS_PER_PAGE);
      inFlight.push(page(next, to));
      next = to;
    }
    const pending = inFlight.shift();
    if (!pending) return;
    const value = await pending;
    if (value !== null) yield value;
  }
}
