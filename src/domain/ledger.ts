import { DeliveryRuns, type LedgerRepository, type QueuedDelivery } from '../store/types.js';

/** A clock: tests move it instead of sleeping. */
export type Clock = () => Date;

export const DAY_MS = 86_400_000;

/** The time `days` (LEDGER_DAYS) before `now`, in milliseconds: records older than it are past retention. */
export const retentionLine = (now: Date, days: number): number => now.getTime() - days * DAY_MS;

export interface LedgerOptions {
  /** LEDGER_DAYS: records older than this go. */
  retentionDays: number;
  now?: Clock;
  /** A batch goes out this long after its first record… */
  flushEveryMs?: number;
  /** …or as soon as it holds this many runs (the rows the batch writes)… */
  batchRuns?: number;
  /** …or this many records. */
  batchRecords?: number;
  /** Records waiting beyond this are dropped (and counted): a stuck database must not grow the heap. */
  maxQueued?: number;
  /** Records deleted per retention statement, so no sweep holds the write lock for long. */
  retentionBatch?: number;
  retentionEveryMs?: number;
  /** A failed write or sweep (the records of that batch are lost; the next batch tries again). */
  onError?: (error: unknown, stage: 'write' | 'retention') => void;
}

/**
 * The delivery ledger's writer (CONTRACT §12). `record` only queues: the request never waits
 * for the database. The queue is written in batches a second after its first record (or at
 * `batchRuns` runs or `batchRecords` records), so a crash loses at most the last second, and an
 * instance nobody asks sets no timer; a full queue drops new records and counts them.
 * Retention runs off the request path too, in small batches.
 */
export class DeliveryLedger {
  /** Kept as runs (DeliveryRuns says why), handed to the store whole. */
  private queue = new DeliveryRuns();
  private flushing: Promise<void> | null = null;
  /** Set by the first record the queue holds, so an instance that answers nothing wakes for nothing. */
  private flushTimer: NodeJS.Timeout | null = null;
  /** Set by start(): records are written on a timer only once started. */
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Records dropped because the queue was full, since start. */
  dropped = 0;

  private readonly now: Clock;
  private readonly flushEveryMs: number;
  private readonly batchRuns: number;
  private readonly batchRecords: number;
  private readonly maxQueued: number;

  constructor(private readonly repository: LedgerRepository, private readonly options: LedgerOptions) {
    this.now = options.now ?? (() => new Date());
    this.flushEveryMs = options.flushEveryMs ?? 1_000;
    // A batch's cost is its rows, each a run of one consumer's answers in the batch. So a batch
    // waits its second unless it makes this many rows (~0.1 s of SQLite's write lock) or holds
    // half the queue's bound. At 5,000 records, as before, 304s across 5,000 stores' keys sent a
    // batch every ~0.4 s, a row each 1–2 answers (bench/RESULTS.md, "2026-12-07, late night").
    // Each batch is a commit, too, and every commit makes the servers' caches check the database
    // again (the key look-ups, store/sqlite/change-signal.ts): at 25,000 answers a second, 500
    // records a batch made it 50 a second.
    this.batchRuns = options.batchRuns ?? 10_000;
    this.maxQueued = options.maxQueued ?? 50_000;
    this.batchRecords = options.batchRecords ?? this.maxQueued / 2;
  }

  record(entry: QueuedDelivery): void {
    if (this.queue.length >= this.maxQueued) {
      this.dropped++;
      return;
    }
    this.queue.push(entry);
    if ((this.queue.runs >= this.batchRuns || this.queue.length >= this.batchRecords) && !this.flushing) void this.flush();
    else if (this.sweepTimer && !this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = null;
        void this.flush();
      }, this.flushEveryMs);
      this.flushTimer.unref();
    }
  }

  /** Whether a flush is set to run (records wait for it); for tests. */
  get flushPending(): boolean {
    return this.flushTimer !== null;
  }

  /** Whether a batch is being written; for tests. */
  get writing(): boolean {
    return this.flushing !== null;
  }

  /** Writes everything queued so far (tests call it instead of waiting for the timer). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = new DeliveryRuns();
    this.flushing = this.repository.insert(batch)
      .catch((error) => this.options.onError?.(error, 'write'))
      .finally(() => { this.flushing = null; });
    await this.flushing;
  }

  /** Deletes records older than LEDGER_DAYS, batch by batch; returns how many went. */
  async sweep(): Promise<number> {
    const before = new Date(retentionLine(this.now(), this.options.retentionDays));
    const batch = this.options.retentionBatch ?? 1_000;
    let total = 0;
    for (;;) {
      const deleted = await this.repository.deleteOlderThan(before, batch);
      total += deleted;
      if (deleted < batch) return total;
    }
  }

  /** From now on what is recorded is written within `flushEveryMs`, and old records swept. */
  start(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => void this.sweep().catch((error) => this.options.onError?.(error, 'retention')), this.options.retentionEveryMs ?? 600_000);
    this.sweepTimer.unref();
    if (this.queue.length > 0) void this.flush();
  }

  /** Stops the timers and writes what is queued (on shutdown). */
  async stop(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.flushTimer = this.sweepTimer = null;
    await this.flush();
  }
}
