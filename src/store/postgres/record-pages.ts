/*
 * A list's records read as pages of positions (from ≤ seq < to), a few at once, handed out in
 * order. Pages are independent because a published list never changes; each is its own COPY
 * on its own pooled connection, returned to the pool as soon as the page is read, so a render
 * holds at most PAGES_IN_FLIGHT connections, each for a page's worth of server time (~50 ms),
 * never for a download's: a slow downloader leaves pages waiting here, not connections or
 * snapshots in PostgreSQL. (One COPY for the whole list was measured no faster than one page
 * at a time, and would hold its connection and snapshot as long as the slowest consumer.)
 */

import { pageIndexSql as sharedPageIndexSql } from '../sheet-row-numbers.js';

/**
 * Positions per page: ~4 MiB of JSON records, ~50 ms of the server's work. Each page is a
 * statement the server parses and plans again (~1 ms for a JSON record's expression), so pages
 * of 20,000 cost it ~8 % less than pages of 5,000 (bench/RESULTS.md, "2026-11-26, late night").
 */
export const POSITIONS_PER_PAGE = 20_000;
/** The first page is small, so the first bytes of an export go out after ~2 ms of the server's work. */
export const FIRST_PAGE_POSITIONS = 1000;
/**
 * Pages being read at once. The server's work per record (~2.3 µs for a JSON item, ~2.7 µs for
 * XML, against ~0.9 µs for COPY's own text) is what limits a render, and two backends share it
 * over two cores: 100k JSON items in 0.17–0.30 s instead of 0.27–0.38 s with one (2 CPUs;
 * bench/RESULTS.md, "night"). As many connections as the paged queries before COPY held.
 */
export const PAGES_IN_FLIGHT = 2;

/** The index of recordPages' page that holds position `seq` of a list whose first position is `first`. */
export const pageIndexSql = (seq: string, first: string): string => sharedPageIndexSql(seq, first, FIRST_PAGE_POSITIONS, POSITIONS_PER_PAGE);

/** Reads the records of positions from ≤ seq < to; an empty array when none are there. */
export type PageReader = (from: number, to: number) => Promise<readonly Uint8Array[]>;

/** The records of every page between the list's first and last position, in order. */
export async function* recordPages(bounds: readonly [number | null, number | null], readPage: PageReader): AsyncGenerator<Uint8Array> {
  const [first, last] = bounds;
  if (first === null || last === null) return;
  const inFlight: Promise<readonly Uint8Array[]>[] = [];
  let next = first;
  const ask = () => {
    while (inFlight.length < PAGES_IN_FLIGHT && next <= last) {
      const to = next + (next === first ? FIRST_PAGE_POSITIONS : POSITIONS_PER_PAGE);
      const page = readPage(next, to);
      // A page read ahead may fail while an earlier one is awaited: thrown when its turn comes.
      page.catch(() => undefined);
      inFlight.push(page);
      next = to;
    }
  };
  ask();
  for (let page = inFlight.shift(); page; page = inFlight.shift()) {
    // The next pages are asked for before this one is handed on, so the server keeps working
    // while the consumer takes it: at most this page and PAGES_IN_FLIGHT more are held here.
    ask();
    // A page whose rows the filter all dropped (or a gap of refused duplicates) holds nothing.
    yield* await page;
  }
}
