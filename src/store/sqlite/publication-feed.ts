import type Database from 'better-sqlite3';
import type { Publication, PublicationFeed } from '../warming-types.js';
import { changeSignal, type ChangeSignal } from './change-signal.js';
import type { EventsFile } from './events-file.js';

/** How often the feed checks when it is told of publications (the events file watched): only for an announcement lost. */
export const WATCHED_CHECK_MS = 5_000;
/**
 * How often it checks where nothing can be watched: one 48-byte pread of the WAL-index header,
 * whatever the number of stores; the publication log is queried only after a commit.
 */
export const SIGNAL_CHECK_MS = 250;

/** The feed's checks, apart for tests (a watch-only feed checks once an hour). */
export interface FeedTiming {
  watchedCheckMs: number;
  checkMs: number;
}

/**
 * Publications on SQLite. Every process that commits a publication touches the database's
 * events file after it (events-file.ts), which wakes the feed at once; the feed then looks at
 * the WAL-index header (change-signal.ts: any commit by any connection rewrites it) and only
 * when it moved asks the publication log (one row per store, filled by a trigger in the
 * publication's own transaction) for the rows after the last one seen — an indexed range of
 * the rows that are new, usually one. A slow check (5 s) catches what no announcement told;
 * where the file cannot be watched, the checks run every 250 ms as before. An in-memory
 * database has no header (and `PRAGMA data_version` does not change for a connection's own
 * commits), so there the log is asked on every check; it has one connection and no other process.
 */
export class SqlitePublicationFeed implements PublicationFeed {
  private signal: ChangeSignal | null = null;
  private timer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  private lastSeq = 0;
  private onPublished: ((publications: Publication[]) => void) | null = null;
  private onError: ((error: unknown) => void) | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly events: EventsFile,
    private readonly timing: FeedTiming = { watchedCheckMs: WATCHED_CHECK_MS, checkMs: SIGNAL_CHECK_MS },
  ) {}

  /** Whether announcements wake the feed (else it polls); for tests. */
  get watching(): boolean {
    return this.unsubscribe !== null;
  }

  start(onPublished: (publications: Publication[]) => void, onError?: (error: unknown) => void): void {
    if (this.timer) return;
    this.onPublished = onPublished;
    this.onError = onError;
    this.signal = changeSignal(this.db, this.path);
    this.signal.changed();
    // What is already published is not news: an instance that starts renders nothing at once.
    this.lastSeq = (this.db.prepare('SELECT coalesce(max(seq), 0) FROM publication_log').pluck().get() as number) ?? 0;
    this.unsubscribe = this.events.subscribe(() => this.check());
    this.timer = setInterval(() => this.check(), this.unsubscribe ? this.timing.watchedCheckMs : this.timing.checkMs);
    this.timer.unref();
  }

  /** One check: the header, and the log only when it moved; exposed for tests. */
  check(): void {
    if (!this.signal || !this.onPublished) return;
    try {
      if (!this.signal.changed() && this.path !== ':memory:') return;
      const rows = this.db
        .prepare('SELECT seq, store_id AS storeId, version FROM publication_log WHERE seq > ? ORDER BY seq')
        .all(this.lastSeq) as Publication[];
      if (rows.length === 0) return;
      this.lastSeq = rows[rows.length - 1].seq;
      this.onPublished(rows);
    } catch (error) {
      this.onError?.(error);
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.signal?.close();
    this.signal = null;
    this.onPublished = null;
  }
}
