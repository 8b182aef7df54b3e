import { closeSync, openSync, readSync } from 'node:fs';
import type Database from 'better-sqlite3';

/** Tells whether any connection, in this process or another, may have committed since the last ask. */
export interface ChangeSignal {
  changed(): boolean;
  close(): void;
}

/** `PRAGMA data_version`: exact, but a read transaction each time (two fcntl locks and an fstat). */
class DataVersion implements ChangeSignal {
  private readonly statement: Database.Statement;
  private seen = -1;

  constructor(db: Database.Database) {
    this.statement = db.prepare('PRAGMA data_version').pluck();
  }

  changed(): boolean {
    const version = this.statement.get() as number;
    if (version === this.seen) return false;
    this.seen = version;
    return true;
  }

  close(): void {}
}

/**
 * The first copy of the WAL-index header (the first 48 bytes of the `-shm` file, SQLite's
 * documented WAL-index format, https://sqlite.org/walformat.html §2.1): every commit by any
 * connection rewrites it (mxFrame grows; a WAL restart changes the salts), so "these 48 bytes
 * differ from last time" is a sound "something may have changed", read with one pread instead
 * of the three system calls of a read transaction (bench/RESULTS.md, "304 revalidations").
 * A read that races a commit sees other bytes and counts as a change: only ever too cautious.
 * The file stays the same while this process holds its connection (SQLite removes or resets
 * it only when the last connection closes).
 */
class WalIndexHeader implements ChangeSignal {
  private fd: number | null = null;
  private readonly seen = Buffer.alloc(48);
  private readonly now = Buffer.alloc(48);
  private first = true;

  /** `untilOpen` answers until the `-shm` file exists (a new database has none before its first write). */
  constructor(
    private readonly shmPath: string,
    private readonly untilOpen: ChangeSignal,
  ) {}

  changed(): boolean {
    if (this.fd === null) {
      try {
        this.fd = openSync(this.shmPath, 'r');
      } catch {
        return this.untilOpen.changed();
      }
    }
    const read = readSync(this.fd, this.now, 0, 48, 0);
    if (!this.first && read === 48 && this.now.equals(this.seen)) return false;
    this.first = false;
    this.now.copy(this.seen);
    // A short read (a file reset to zero length) is kept as it is, and differs from the next full one.
    if (read < 48) this.seen.fill(0xff, read);
    return true;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** What commits since the last ask may have changed of the key look-ups: nothing, every look-up, or those of these stores. */
export type KeyLookupChanges = 'none' | 'all' | ReadonlySet<string>;

/** Tells what of the key look-ups commits since the last ask may have changed. */
export interface KeyLookupSignal {
  changes(): KeyLookupChanges;
  close(): void;
}

/** A signal that knows no more than "something was committed": every commit changes every look-up. */
export const everyCommit = (signal: ChangeSignal): KeyLookupSignal => ({
  changes: () => (signal.changed() ? 'all' : 'none'),
  close: () => signal.close(),
});

/** Rows of key_lookup_changes read at once; more since the last ask: everything is dropped. */
const STORE_CHANGES_READ = 1000;

/**
 * A signal narrowed to what the key look-ups read: when `any` fires (some commit), the counter
 * the schema's triggers raise for a key, a store added or removed (schema.ts) says whether
 * every look-up may have changed, and key_lookup_changes names the stores whose latest list
 * or lists changed since the last ask. Two reads per commit seen, not per request. Before the
 * migrations made them, every commit changes everything.
 */
class KeyLookupGeneration implements KeyLookupSignal {
  private generation: Database.Statement | null = null;
  private storeChanges: Database.Statement | null = null;
  private lastChange: Database.Statement | null = null;
  private seen: number | null = null;
  /** The last key_lookup_changes row read; null: none yet (the first ask changes everything). */
  private lastSeq: number | null = null;

  constructor(private readonly db: Database.Database, private readonly any: ChangeSignal) {}

  changes(): KeyLookupChanges {
    if (!this.any.changed()) return 'none';
    try {
      this.generation ??= this.db.prepare('SELECT n FROM key_lookup_generation').pluck();
      this.storeChanges ??= this.db.prepare(`SELECT seq, store_id FROM key_lookup_changes WHERE seq > ? ORDER BY seq LIMIT ${STORE_CHANGES_READ + 1}`).raw();
      this.lastChange ??= this.db.prepare('SELECT coalesce(max(seq), 0) FROM key_lookup_changes').pluck();
      const generation = this.generation.get() as number;
      // A moved generation (or the first ask) drops everything: the store changes need no reading.
      const since = generation === this.seen ? this.lastSeq : null;
      this.seen = generation;
      const rows = since === null ? [] : (this.storeChanges.all(since) as [number, string][]);
      // Rows pruned since the last ask (a gap after it), or more than are read: drop everything too.
      if (since === null || rows.length > STORE_CHANGES_READ || (rows.length > 0 && rows[0][0] !== since + 1)) {
        this.lastSeq = this.lastChange.get() as number;
        return 'all';
      }
      if (rows.length === 0) return 'none';
      this.lastSeq = rows[rows.length - 1][0];
      return new Set(rows.map(([, store]) => store));
    } catch {
      this.generation = this.storeChanges = this.lastChange = null;
      this.seen = null;
      this.lastSeq = null;
      return 'all';
    }
  }

  close(): void {
    this.any.close();
  }
}

/** What commits since the last ask may have changed of the key look-ups (see KeyLookupGeneration). */
export function keyLookupSignal(db: Database.Database, path: string): KeyLookupSignal {
  return new KeyLookupGeneration(db, changeSignal(db, path));
}

/**
 * The cheapest exact signal for a database file in WAL mode: its WAL-index header once the
 * `-shm` file can be read, `PRAGMA data_version` before that and for an in-memory database.
 */
export function changeSignal(db: Database.Database, path: string): ChangeSignal {
  const dataVersion = new DataVersion(db);
  if (path === ':memory:' || db.pragma('journal_mode', { simple: true }) !== 'wal') return dataVersion;
  return new WalIndexHeader(`${path}-shm`, dataVersion);
}
