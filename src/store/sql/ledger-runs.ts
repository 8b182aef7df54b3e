import type { DeliveryRecord, StoredDelivery } from '../delivery-types.js';

/*
 * How the delivery ledger stores its records: one row per *run*, the consecutive records of one
 * consumer (client class and address) that differ only in their time, bytes and duration — a
 * poller revalidating every few seconds, wrk's 32 connections, a fetcher retrying. The row holds
 * the run's first record in its columns; the others travel as `repeated`, a JSON array of
 * [at ms, bytes_sent, duration_ms] triples. One SQLite row costs ~2 µs to insert and every answer
 * is a record (CONTRACT §12): row by row, the ledger took 10–12 % of a 304's CPU
 * (bench/RESULTS.md, "The ledger's runs"). Readers expand the runs back into records, so the API
 * still shows every answer with its own id: the run's row id × RUN_ID_SPACE + its place in the run.
 */

/** Records in one run at most (their ids are row id × RUN_ID_SPACE + 0 … RUN_ID_SPACE − 1). */
export const RUN_ID_SPACE = 1024;
/**
 * A run's records start within this span of each other (a long download started earlier may
 * close among quick ones). Readers rely on it: a run holding records older than a time T ends
 * before T + RUN_SPAN_MS.
 */
export const RUN_SPAN_MS = 60_000;

/** One row of delivery_ledger: a run's first record, and the rest of it. */
export interface LedgerRun {
  first: DeliveryRecord;
  /** The time of the run's newest record (an index orders runs by it). */
  lastAt: Date;
  /** [at ms, bytes_sent, duration_ms] of every record after the first, oldest first. */
  repeated: number[];
}

/** Whether two records may share a run: everything but when, how much and how long is equal. */
const sameShape = (a: DeliveryRecord, b: DeliveryRecord): boolean =>
  a.client_address === b.client_address && a.client_class === b.client_class && a.key_id === b.key_id && a.store_id === b.store_id
  && a.status === b.status && a.finished === b.finished && a.version === b.version && a.format === b.format && a.address === b.address
  && a.profile_id === b.profile_id && a.only_available === b.only_available;

/**
 * The batch's records as runs. A consumer's run ends when it gets an answer of another shape
 * (so a consumer's runs never interleave, and "its last three answers" stay in order), when it
 * is full, or when a record starts more than RUN_SPAN_MS / 2 from the run's first.
 */
export function runsOf(records: readonly DeliveryRecord[]): LedgerRun[] {
  // The open run of each consumer, by address, then class (compared, not joined into a key:
  // this runs for every answer the service gives).
  const open = new Map<string, DeliveryRecord[][]>();
  const runs: DeliveryRecord[][] = [];
  for (const record of records) {
    let ofAddress = open.get(record.client_address);
    if (!ofAddress) open.set(record.client_address, (ofAddress = []));
    const index = ofAddress.findIndex((run) => run[0].client_class === record.client_class);
    const run = index >= 0 ? ofAddress[index] : null;
    if (run && sameShape(run[0], record) && run.length < RUN_ID_SPACE && Math.abs(record.at.getTime() - run[0].at.getTime()) <= RUN_SPAN_MS / 2) {
      run.push(record);
      continue;
    }
    const next = [record];
    if (index >= 0) ofAddress[index] = next;
    else ofAddress.push(next);
    runs.push(next);
  }
  return runs.map((run) => {
    // Oldest first, so a run's ids follow its records' times as the single rows' ids did.
    run.sort((a, b) => a.at.getTime() - b.at.getTime());
    const repeated: number[] = [];
    for (let i = 1; i < run.length; i++) repeated.push(run[i].at.getTime(), run[i].bytes_sent, run[i].duration_ms);
    return { first: run[0], lastAt: run[run.length - 1].at, repeated };
  });
}

/** A stored run's records, oldest first, each with its id. */
export function recordsOf(rowId: number, first: DeliveryRecord, repeated: readonly number[] | null): StoredDelivery[] {
  const records: StoredDelivery[] = [{ ...first, id: rowId * RUN_ID_SPACE }];
  if (!repeated) return records;
  for (let i = 0; i + 2 < repeated.length; i += 3) {
    records.push({ ...first, id: rowId * RUN_ID_SPACE + records.length, at: new Date(repeated[i]), bytes_sent: repeated[i + 1], duration_ms: repeated[i + 2] });
  }
  return records;
}

/** Newest first: by time, then by id (records of one millisecond keep a stable order). */
export const newestFirst = (a: StoredDelivery, b: StoredDelivery): number => b.at.getTime() - a.at.getTime() || b.id - a.id;
