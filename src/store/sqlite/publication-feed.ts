import type Database from 'better-sqlite3';
import type { Publication, PublicationFeed } from '../warming-types.js';
import { changeSignal, type ChangeSignal } from './change-signal.js';

/**
 * How often the WAL-index header is looked at: one 48-byte pread, whatever the number of stores.
 * A publication is noticed within this; the publication log is queried only after a commit.
 */
export const SIGNAL_CHECK_MS = 250;

/**
 * Publications on SQLite: any commit by any connection, this one included, rewrites the
 * WAL-index header (change-signal.ts); only then is the publication log (one row per store,
 * filled by a trigger in the publication's own transaction) asked for the rows after the last
 * one seen — an indexed range of the rows that are new, usually none or one. An in-memory
 * database has no header (and `PRAGMA data_version` does not change for a connection's own
 * commits), so there the log is asked on every check; it has one connection and no other process.
 */
export class SqlitePublicationFeed implements PublicationFeed {
  private signal: ChangeSignal | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastSeq = 0;
  private onPublished: ((publications: Publication[]) => void) | null = null;
  private onError: ((error: unknown) => void) | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
  ) {}

  start(onPublished: (publications: Publication[]) => void, onError?: (error: unknown) => void): void {
    if (this.timer) return;
    this.onPublished = onPublished;
    this.onError = onError;
    this.signal = changeSignal(this.db, this.path);
    this.signal.changed();
    // What is already published is not news: an instance that starts renders nothing at once.
    this.lastSeq = (this.db.prepare('SELECT coalesce(max(seq), 0) FROM publication_log').pluck().get() as number) ?? 0;
    this.timer = setInterval(() => this.check(), SIGNAL_CHECK_MS);
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
    this.signal?.close();
    this.signal = null;
    this.onPublished = null;
  }
}
