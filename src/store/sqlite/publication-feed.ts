import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type Database from 'better-sqlite3';
import type { Publication, PublicationFeed } from '../warming-types.js';
import { changeSignal, type ChangeSignal } from './change-signal.js';

/**
 * How often the WAL-index header is looked at when the `-wal` file cannot be watched (an
 * in-memory database, or no inotify): one 48-byte pread, whatever the number of stores.
 */
export const SIGNAL_CHECK_MS = 250;

/**
 * While the `-wal` file is watched, the header is still looked at this often: the watch can miss
 * a commit (a check that ran between the commit's WAL write and its header update, or a
 * filesystem that accepts a watch and never reports), and the warming it drives is only ever
 * late, never wrong. An idle instance wakes for this once in 5 s instead of four times a second,
 * which on a host with dear wake-ups is most of its idle CPU (bench/RESULTS.md, "2026-12-02").
 */
export const WATCHED_CHECK_MS = 5_000;

/**
 * A commit writes its frames to the `-wal` file, then updates the header (in the mmapped `-shm`
 * file, which a watch does not see): a check comes this long after a write it was told of, so
 * the header it reads is the committed one.
 */
export const WATCH_SETTLE_MS = 20;

/** The seams of the feed's timing, for tests. */
export interface FeedTiming {
  checkMs: number;
  watchedCheckMs: number;
  settleMs: number;
}

/**
 * Publications on SQLite: any commit by any connection, this one included, rewrites the
 * WAL-index header (change-signal.ts); only then is the publication log (one row per store,
 * filled by a trigger in the publication's own transaction) asked for the rows after the last
 * one seen — an indexed range of the rows that are new, usually none or one. The header is
 * looked at when the `-wal` file is written (an inotify watch of the database's folder: every
 * commit, by any process on this host, writes it), and every WATCHED_CHECK_MS besides. An
 * in-memory database has no header (and `PRAGMA data_version` does not change for a connection's
 * own commits), so there the log is asked on every check; it has one connection and no other process.
 */
export class SqlitePublicationFeed implements PublicationFeed {
  private signal: ChangeSignal | null = null;
  private timer: NodeJS.Timeout | null = null;
  private watcher: FSWatcher | null = null;
  private settling: NodeJS.Timeout | null = null;
  private writtenWhileSettling = false;
  private lastSeq = 0;
  private onPublished: ((publications: Publication[]) => void) | null = null;
  private onError: ((error: unknown) => void) | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
    private readonly timing: FeedTiming = { checkMs: SIGNAL_CHECK_MS, watchedCheckMs: WATCHED_CHECK_MS, settleMs: WATCH_SETTLE_MS },
  ) {}

  start(onPublished: (publications: Publication[]) => void, onError?: (error: unknown) => void): void {
    if (this.timer) return;
    this.onPublished = onPublished;
    this.onError = onError;
    this.signal = changeSignal(this.db, this.path);
    this.signal.changed();
    // What is already published is not news: an instance that starts renders nothing at once.
    this.lastSeq = (this.db.prepare('SELECT coalesce(max(seq), 0) FROM publication_log').pluck().get() as number) ?? 0;
    this.watcher = this.watchWal();
    this.poll(this.watcher ? this.timing.watchedCheckMs : this.timing.checkMs);
  }

  /** Whether the `-wal` file is watched (false: the header is polled every SIGNAL_CHECK_MS). */
  get watching(): boolean {
    return this.watcher !== null;
  }

  private poll(ms: number): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => this.check(), ms);
    this.timer.unref();
  }

  /** Null where there is nothing to watch or the watch cannot be set (then the feed polls). */
  private watchWal(): FSWatcher | null {
    if (this.path === ':memory:' || this.path === '') return null;
    const wal = `${basename(this.path)}-wal`;
    try {
      const watcher = watch(dirname(this.path), { persistent: false }, (_event, name) => {
        if (name === wal) this.checkSoon();
      });
      watcher.on('error', () => {
        // The folder went away or inotify gave up: back to polling, nothing missed but time.
        watcher.close();
        if (this.watcher !== watcher) return;
        this.watcher = null;
        if (this.timer) this.poll(this.timing.checkMs);
      });
      return watcher;
    } catch {
      return null;
    }
  }

  /**
   * A check WATCH_SETTLE_MS after a `-wal` write, and again after the writes that came meanwhile:
   * the last check is at least that long after the last write (the commit's header is in place),
   * and a publication writing the file for seconds costs a check per WATCH_SETTLE_MS, and a flag
   * per write (it can write ~100,000 times: two per page).
   */
  private checkSoon(): void {
    if (this.settling) {
      this.writtenWhileSettling = true;
      return;
    }
    this.settling = setTimeout(() => {
      this.settling = null;
      this.check();
      if (!this.writtenWhileSettling) return;
      this.writtenWhileSettling = false;
      this.checkSoon();
    }, this.timing.settleMs);
    this.settling.unref();
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
    if (this.settling) clearTimeout(this.settling);
    this.settling = null;
    this.writtenWhileSettling = false;
    this.watcher?.close();
    this.watcher = null;
    this.signal?.close();
    this.signal = null;
    this.onPublished = null;
  }
}
