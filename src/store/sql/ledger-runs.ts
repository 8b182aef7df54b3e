import { RUN_ID_SPACE, RUN_SPAN_MS, type DeliveryRecord, type DeliveryRuns, type StoredDelivery } from '../delivery-types.js';

/*
 * How the delivery ledger stores its records: one row per *run*, the consecutive records of one
 * consumer (client class and address) that differ only in their time, bytes and duration — a
 * poller revalidating every few seconds, wrk's 32 connections, a fetcher retrying; the ledger's
 * queue gathers them as they come (DeliveryRuns, delivery-types.ts), and a seldom consumer's
 * later batches continue its stored run (ledger-writes.ts). The row holds the run's
 * oldest record in its columns; the others travel as `repeated` (repeatedOf). One
 * SQLite row costs ~2 µs to insert and every answer is a record (CONTRACT §12): row by row, the
 * ledger took 10–12 % of a 304's CPU (bench/RESULTS.md, "The ledger's runs"). Readers expand
 * the runs back into records, so the API still shows every answer with its own id: the run's row
 * id × RUN_ID_SPACE + its place in the run.
 */

/** What a row takes from its run in time order: the oldest record's time, bytes and duration, and the others' triples. */
export interface OrderedRun {
  atMs: number;
  bytesSent: number;
  durationMs: number;
  /** [ms after atMs, bytes_sent, duration_ms] of the records after the oldest; empty for one record. */
  repeated: readonly number[];
}

/**
 * Run `index` of the batch with its records in time order, the oldest first (a row's `at` is
 * its oldest record's: readers rely on it). They nearly always come so, and then the run is
 * read as it is; otherwise (a long download ended among later quick ones) it is rebuilt,
 * records of one millisecond kept in the order they came.
 */
export function orderedRun(batch: DeliveryRuns, index: number): OrderedRun {
  const repeated = batch.repeated[index] ?? [];
  const run = { atMs: batch.atMs[index], bytesSent: batch.bytesSent[index], durationMs: batch.durationMs[index], repeated };
  let previous = 0;
  let ordered = true;
  for (let i = 0; i < repeated.length && ordered; i += 3) {
    ordered = repeated[i] >= previous;
    previous = repeated[i];
  }
  if (ordered) return run;
  const records: [number, number, number][] = [[0, run.bytesSent, run.durationMs]];
  for (let i = 0; i < repeated.length; i += 3) records.push([repeated[i], repeated[i + 1], repeated[i + 2]]);
  records.sort((a, b) => a[0] - b[0]);
  const [[offset, bytesSent, durationMs]] = records;
  return { atMs: run.atMs + offset, bytesSent, durationMs, repeated: records.slice(1).flatMap(([at, b, d]) => [at - offset, b, d]) };
}

/** The time of an ordered run's newest record (its row's `last_at`). */
export const lastAtOf = (run: OrderedRun): number => (run.repeated.length === 0 ? run.atMs : run.atMs + run.repeated[run.repeated.length - 3]);

/**
 * An ordered run's `repeated` column: the JSON array of [at, bytes_sent, duration_ms] of its
 * records after the first, `at` as milliseconds after the first's. Offsets, not times: a time
 * since the epoch is no small integer, and JSON.stringify of such numbers cost ~0.4 µs a record,
 * most of a batch's cost on the main thread (bench/RESULTS.md, "2026-11-26, day").
 */
export const repeatedOf = (run: OrderedRun): string | null => (run.repeated.length === 0 ? null : JSON.stringify(run.repeated));

/**
 * The time of a repeated record. Rows written before the offsets held times since the epoch;
 * an offset is at most RUN_SPAN_MS, a time since the epoch is past 10^12, so each reads right.
 */
export const repeatedAt = (firstAt: number, stored: number): number => (stored > RUN_SPAN_MS ? stored : firstAt + stored);

/** A stored run's records, oldest first, each with its id. */
export function recordsOf(rowId: number, first: DeliveryRecord, repeated: readonly number[] | null): StoredDelivery[] {
  const records: StoredDelivery[] = [{ ...first, id: rowId * RUN_ID_SPACE }];
  if (!repeated) return records;
  for (let i = 0; i + 2 < repeated.length; i += 3) {
    const at = new Date(repeatedAt(first.at.getTime(), repeated[i]));
    records.push({ ...first, id: rowId * RUN_ID_SPACE + records.length, at, bytes_sent: repeated[i + 1], duration_ms: repeated[i + 2] });
  }
  return records;
}

/** Newest first: by time, then by id (records of one millisecond keep a stable order). */
export const newestFirst = (a: StoredDelivery, b: StoredDelivery): number => b.at.getTime() - a.at.getTime() || b.id - a.id;
