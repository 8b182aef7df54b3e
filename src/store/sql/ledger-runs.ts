import type { DeliveryColumns, DeliveryRecord, StoredDelivery } from '../delivery-types.js';

/*
 * How the delivery ledger stores its records: one row per *run*, the consecutive records of one
 * consumer (client class and address) that differ only in their time, bytes and duration — a
 * poller revalidating every few seconds, wrk's 32 connections, a fetcher retrying. The row holds
 * the run's first record in its columns; the others travel as `repeated` (repeatedOf). One
 * SQLite row costs ~2 µs to insert and every answer is a record (CONTRACT §12): row by row, the
 * ledger took 10–12 % of a 304's CPU (bench/RESULTS.md, "The ledger's runs"). Readers expand
 * the runs back into records, so the API still shows every answer with its own id: the run's row
 * id × RUN_ID_SPACE + its place in the run.
 */

/** Records in one run at most (their ids are row id × RUN_ID_SPACE + 0 … RUN_ID_SPACE − 1). */
export const RUN_ID_SPACE = 1024;
/**
 * A run's records start within this span of each other (a long download started earlier may
 * close among quick ones). Readers rely on it: a run holding records older than a time T ends
 * before T + RUN_SPAN_MS.
 */
export const RUN_SPAN_MS = 60_000;

/**
 * A run: the places in its batch of one consumer's records that are stored as one row of
 * delivery_ledger, oldest first. The first is stored in the row's columns; the others as
 * `repeated` (repeatedOf).
 */
export type LedgerRun = number[];

/** Whether records a and b of the batch may share a run: everything but when, how much and how long is equal. */
const sameShape = (c: DeliveryColumns, a: number, b: number): boolean =>
  c.clientAddress[a] === c.clientAddress[b] && c.clientClass[a] === c.clientClass[b] && c.keyId[a] === c.keyId[b] && c.storeId[a] === c.storeId[b]
  && c.status[a] === c.status[b] && c.finished[a] === c.finished[b] && c.version[a] === c.version[b] && c.format[a] === c.format[b]
  && c.address[a] === c.address[b] && c.profileId[a] === c.profileId[b] && c.onlyAvailable[a] === c.onlyAvailable[b];

/**
 * The batch's records as runs. A consumer (a store's client class and address) has one open run;
 * it ends when the consumer gets an answer of another shape (so a consumer's runs never
 * interleave, and "its last three answers" stay in order), when it is full, or when a record
 * starts more than RUN_SPAN_MS / 2 from the run's first. Other stores' answers in between do
 * not end it: across a fleet, a batch interleaves thousands of stores.
 */
export function runsOf(batch: DeliveryColumns): LedgerRun[] {
  // The open runs of each store's consumers, by store: a store has a handful of consumers in a
  // batch, so a scan of its open runs is cheaper than a map per store (a fleet's batch names
  // thousands of stores) or a key joined from three strings for every answer.
  const open = new Map<string, LedgerRun[]>();
  const runs: LedgerRun[] = [];
  const { at, storeId, clientAddress, clientClass } = batch;
  for (let i = 0; i < batch.length; i++) {
    let ofStore = open.get(storeId[i]);
    if (!ofStore) open.set(storeId[i], (ofStore = []));
    let index = 0;
    while (index < ofStore.length && (clientAddress[ofStore[index][0]] !== clientAddress[i] || clientClass[ofStore[index][0]] !== clientClass[i])) index++;
    const run = index < ofStore.length ? ofStore[index] : null;
    if (run && run.length < RUN_ID_SPACE && sameShape(batch, run[0], i) && Math.abs(at[i] - at[run[0]]) <= RUN_SPAN_MS / 2) {
      run.push(i);
      continue;
    }
    const next = [i];
    ofStore[index] = next;
    runs.push(next);
  }
  // Oldest first, so a run's ids follow its records' times as the single rows' ids did. They
  // nearly always arrive so; sorting runs that already were cost ~0.1 µs a record.
  for (const run of runs) if (!inTimeOrder(at, run)) run.sort((a, b) => at[a] - at[b]);
  return runs;
}

function inTimeOrder(at: readonly number[], run: LedgerRun): boolean {
  for (let k = 1; k < run.length; k++) if (at[run[k]] < at[run[k - 1]]) return false;
  return true;
}

/**
 * A run's `repeated` column: the JSON array of [at, bytes_sent, duration_ms] of its records
 * after the first, `at` as milliseconds after the first's. Offsets, not times: a time since the
 * epoch is no small integer, and JSON.stringify of such numbers cost ~0.4 µs a record, most of
 * a batch's cost on the main thread (bench/RESULTS.md, "2026-11-26, day").
 */
export function repeatedOf(batch: DeliveryColumns, run: LedgerRun): string | null {
  if (run.length === 1) return null;
  const { at, bytesSent, durationMs } = batch;
  const first = at[run[0]];
  const triples: number[] = [];
  for (let k = 1; k < run.length; k++) triples.push(at[run[k]] - first, bytesSent[run[k]], durationMs[run[k]]);
  return JSON.stringify(triples);
}

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
