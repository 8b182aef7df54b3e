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

/**
 * A signal narrowed to what the key look-ups read: when `any` fires (some commit), the counter
 * the schema's triggers raise for a change to a key, a store or a list (schema.ts) says whether
 * that commit touched them. One read transaction per commit seen, not per request. Before the
 * migration made the counter, every commit counts.
 */
class KeyLookupGeneration implements ChangeSignal {
  private statement: Database.Statement | null = null;
  private seen: number | null = null;

  constructor(private readonly db: Database.Database, private readonly any: ChangeSignal) {}

  changed(): boolean {
    if (!this.any.changed()) return false;
    let generation: number;
    try {
      this.statement ??= this.db.prepare('SELECT n FROM key_lookup_generation').pluck();
      generation = this.statement.get() as number;
    } catch {
      this.statement = null;
      this.seen = null;
      return true;
    }
    if (generation === this.seen) return false;
    this.seen = generation;
    return true;
  }

  close(): void {
    this.any.close();
  }
}

/** Whether a commit since the last ask may have changed a key look-up (see KeyLookupGeneration). */
export function keyLookupSignal(db: Database.Database, path: string): ChangeSignal {
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
