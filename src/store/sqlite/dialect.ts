import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { categoryLevels, parentPath } from '../item-row.js';
import type { ColumnKind, Query, QueryResult, SqlDialect, Steps } from '../sql/dialect.js';
import { keyLookupSignal } from './change-signal.js';
import { registerSheetRowFunctions } from './sheet-row-sql.js';
import { SqliteItems } from './items.js';
import { KeyLookupCache } from './key-lookup-cache.js';
import { EventsFile } from './events-file.js';
import { SqlitePublicationFeed } from './publication-feed.js';
import { findRecordsExtension, loadRecordsExtension } from './records-extension.js';
import { SQLITE_MIGRATIONS } from './schema.js';
import { AppendThread, PageWorkers, WriteThread } from './store-threads.js';

/** Integer milliseconds since the epoch, as every time column holds them. */
const NOW_MS = "CAST(round(unixepoch('subsec') * 1000) AS INTEGER)";

/**
 * The embedded database: one file, WAL so readers never wait for a publication. Statements
 * run synchronously on this thread (a transaction's all at once, so nothing slips in between);
 * exports read on page threads and publications append on an append thread.
 */
export class SqliteDialect implements SqlDialect {
  readonly name = 'sqlite';
  readonly now = NOW_MS;
  readonly keyLookups: KeyLookupCache;
  private readonly db: Database.Database;
  private readonly pageWorkers: PageWorkers | null;
  private readonly appendThread: AppendThread | null;
  private readonly writeThread: WriteThread | null;
  readonly items: SqliteItems;

  /**
   * Prepared statements, kept: preparing costs more than running a key look-up, and every
   * request runs the same few. Each SQL text is used in one mode (plain, pluck or raw) only.
   */
  private readonly statements = new Map<string, Database.Statement>();

  /** Whether CSV/TSV, JSON and XML pages are built by the C extension (records-extension.ts) rather than by SQL. */
  readonly nativeRecords: boolean;

  /** `nativeRecords: false` builds every page by SQL even where the extension was built (the tests compare both). */
  constructor(path: string, options: { nativeRecords?: boolean } = {}) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    // The CLI may publish while the server runs: wait for the other writer instead of failing.
    this.db.pragma('busy_timeout = 10000');
    // Read with read(), not memory-mapped (SQLite's default; said here because 725d942 mapped it).
    // In WAL mode SQLite drops a connection's whole map of the file once another connection has
    // committed (the CLI or another instance publishing, this process's own write and append
    // threads), so each page touched after a commit was mapped anew: a page fault a page, ~10 µs
    // on some hosts. In a publish storm the point reads cost 2–4× more mapped than read()
    // (bench/RESULTS.md, "2026-12-07, morning"). The big joins mapping once helped (the changes
    // feed) now run on the page threads, unmapped since 66c7ac1.
    this.db.pragma('mmap_size = 0');
    // An in-memory database builds its XLSX rows on this connection (sheet-row-sql.ts).
    registerSheetRowFunctions(this.db);
    const extension = options.nativeRecords === false ? null : findRecordsExtension();
    this.nativeRecords = extension !== null && loadRecordsExtension(this.db, extension);
    this.keyLookups = new KeyLookupCache(keyLookupSignal(this.db, path));
    this.path = path;
    this.events = new EventsFile(path === ':memory:' ? null : `${path}-events`);
    // Worker threads need a file to open; an in-memory database builds its pages here.
    this.pageWorkers = path === ':memory:' ? null : new PageWorkers(path, this.nativeRecords ? extension : null);
    this.appendThread = path === ':memory:' ? null : new AppendThread(path, this.nativeRecords ? extension : null);
    this.writeThread = path === ':memory:' ? null : new WriteThread(path);
    const prepare = (sql: string) => this.prepare(sql);
    this.items = new SqliteItems({
      db: this.db,
      prepare,
      pageRunner: { workers: this.pageWorkers, runHere: (sql, values) => prepare(sql).pluck().get(values) },
      appendThread: this.appendThread,
      nativeRecords: this.nativeRecords,
    });
  }

  private readonly path: string;
  /** Touched after the commits other processes must hear of (events-file.ts). */
  private readonly events: EventsFile;

  publicationFeed(): SqlitePublicationFeed {
    return new SqlitePublicationFeed(this.db, this.path, this.events);
  }

  announce(): void {
    this.events.announce();
  }

  watchAnnouncements(listener: () => void): (() => void) | null {
    return this.events.subscribe(listener);
  }

  private prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private run({ sql, params }: Query): QueryResult {
    const statement = this.prepare(sql);
    if (statement.reader) {
      const rows = statement.all(params) as QueryResult['rows'];
      return { rows, changes: rows.length };
    }
    return { rows: [], changes: statement.run(params).changes };
  }

  async query(query: Query): Promise<QueryResult> {
    return this.run(query);
  }

  /** On the write thread (write-worker.ts); an in-memory database has no file for it, so here. */
  async background(queries: readonly Query[]): Promise<number[]> {
    if (!this.writeThread) return this.db.transaction(() => queries.map((query) => this.run(query).changes)).immediate();
    return this.writeThread.run(queries.map(({ sql, params }) => ({ sql, params })));
  }

  async transaction<T>(steps: Steps<T>): Promise<T> {
    return this.db.transaction(() => {
      let step = steps.next();
      while (!step.done) step = steps.next(this.run(step.value));
      return step.value;
    }).immediate();
  }

  time(value: unknown): Date {
    return new Date(Number(value));
  }

  timeParam(at: Date): unknown {
    return at.getTime();
  }

  json<T>(value: unknown): T {
    return (typeof value === 'string' ? JSON.parse(value) : value) as T;
  }

  ago(ms: number): string {
    return `(${NOW_MS} - ${Math.trunc(ms)})`;
  }

  anyId(column: string): string {
    return `${column} IN (SELECT value FROM json_each(?))`;
  }

  ids(ids: readonly number[]): unknown {
    return JSON.stringify(ids);
  }

  /** A VALUES list: SQLite types a value by what it is (times are integers, ms; booleans 1 or 0, as bound). */
  rowsQuery(kinds: readonly ColumnKind[], rows: number): string {
    const row = `(${kinds.map(() => '?').join(', ')})`;
    return `VALUES ${Array(rows).fill(row).join(', ')}`;
  }

  rowsParams(_kinds: readonly ColumnKind[], values: readonly unknown[]): unknown[] {
    return values as unknown[];
  }

  /**
   * `most`, else the largest power of two: each number of rows is a text of its own, which the
   * write thread keeps prepared, and the ledger's VALUES of 500 rows is 0.4 MB of prepared
   * statement: one for each number up to 500 would hold ~200 MB a statement kind (scratch,
   * bench/RESULTS.md "2026-12-07"); a few more statements a batch cost microseconds here.
   */
  rowsInStatement(left: number, most: number): number {
    return left >= most ? most : 2 ** Math.floor(Math.log2(left));
  }

  anyText(column: string): string {
    return `${column} IN (SELECT value FROM json_each(?))`;
  }

  texts(values: readonly string[]): unknown {
    return JSON.stringify(values);
  }

  /** Ids for every level of every path, creating the missing ones; ids never change once given. */
  *ensureCategories(storeId: string, paths: readonly string[]): Steps<number[]> {
    const ids = new Map<string, number>();
    for (const path of categoryLevels(paths)) {
      let id = (yield { sql: 'SELECT id FROM categories WHERE store_id = ? AND path = ?', params: [storeId, path] }).rows[0]?.id;
      if (id === undefined) {
        const parent = parentPath(path);
        id = (yield {
          sql: 'INSERT INTO categories (store_id, path, parent_id) VALUES (?, ?, ?) RETURNING id',
          params: [storeId, path, parent === null ? null : ids.get(parent) ?? null],
        }).rows[0].id;
      }
      ids.set(path, Number(id));
    }
    return [...ids.values()];
  }

  async migrate(): Promise<void> {
    // One write transaction for the check and the changes: two processes migrating a new file
    // at once take turns, and the second finds everything applied.
    this.db.transaction(() => {
      this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
      const applied = new Set(this.prepare('SELECT version FROM schema_migrations').pluck().all() as number[]);
      SQLITE_MIGRATIONS.forEach((sql, index) => {
        const version = index + 1;
        if (applied.has(version)) return;
        this.db.exec(sql);
        this.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
      });
    }).immediate();
  }

  async ping(): Promise<void> {
    this.prepare('SELECT 1').get();
  }

  async pendingMigrations(): Promise<number> {
    const hasTable = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
    if (!hasTable) return SQLITE_MIGRATIONS.length;
    const applied = this.db.prepare('SELECT count(*) FROM schema_migrations WHERE version <= ?').pluck().get(SQLITE_MIGRATIONS.length) as number;
    return SQLITE_MIGRATIONS.length - applied;
  }

  journalMode(): string {
    return String(this.db.pragma('journal_mode', { simple: true }));
  }

  startThreads(): void {
    this.pageWorkers?.start();
  }

  async close(): Promise<void> {
    await this.pageWorkers?.close();
    await this.appendThread?.close();
    await this.writeThread?.close();
    this.keyLookups.close();
    this.events.close();
    this.db.close();
  }
}
