import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { STORED_FIELDS, type DelimitedRecordSpec } from '../../model/delimited-record.js';
import type { Profile, ProfileDefinition } from '../../model/profile.js';
import type { PriceItem } from '../../model/price-item.js';
import { categoryLevels, itemFromRow, parentPath, STALE_DRAFT_MS, SUPERSEDED_GRACE_MS } from '../item-row.js';
import type {
  ApiKeyRecord, CategoryRecord, DuplicateOffer, KeyLookup, LatestPriceList, NewApiKey, NewStore, PriceListRecord, PublicationDraft,
  PublicationSummary, ReadItemsOptions, SequencedItem, Store, StoreRecord,
} from '../types.js';
import { changeSignal } from './change-signal.js';
import { compileRecord } from './delimited-sql.js';
import { INSERT_ITEM_SQL, itemInsertValues } from './item-insert.js';
import { KeyLookupCache } from './key-lookup-cache.js';
import { listPages, POSITIONS_PER_PAGE, type PageQuery, type PageRunner } from './list-pages.js';
import { AppendThread, PageWorkers } from './store-threads.js';
import { SQLITE_MIGRATIONS } from './schema.js';
import { SqlitePublicationFeed } from './publication-feed.js';
import { SqliteVariantDemand } from './variant-demand.js';
import type { PublicationFeed, VariantDemandRepository } from '../warming-types.js';

type Row = Record<string, unknown>;

const date = (ms: unknown): Date => new Date(Number(ms));
const dateOrNull = (ms: unknown): Date | null => (ms === null || ms === undefined ? null : date(ms));

const storeFrom = (r: Row): StoreRecord => ({
  id: r.id as string, name: r.name as string, currency: r.currency as string,
  url: (r.url as string | null) ?? null, company: (r.company as string | null) ?? null, created_at: date(r.created_at),
});
const keyFrom = (r: Row): ApiKeyRecord => ({
  id: r.id as string, store_id: r.store_id as string, label: (r.label as string | null) ?? null, prefix: r.prefix as string,
  created_at: date(r.created_at), last_used_at: dateOrNull(r.last_used_at), revoked_at: dateOrNull(r.revoked_at),
});
const priceListFrom = (r: Row): PriceListRecord => ({
  id: Number(r.id), store_id: r.store_id as string, version: Number(r.version), published_at: date(r.published_at),
  item_count: Number(r.item_count), available_count: Number(r.available_count),
  currencies: JSON.parse(r.currencies as string), category_ids: JSON.parse(r.category_ids as string),
});
const profileFrom = (r: Row): Profile => ({
  ...(JSON.parse(r.definition as string) as ProfileDefinition),
  id: Number(r.id), store_id: r.store_id as string, revision: Number(r.revision), updated_at: date(r.updated_at),
});

/** The embedded store: one file, WAL so readers never wait for a publication. */
export class SqliteStore implements Store {
  readonly dialect = 'sqlite';
  private readonly db: Database.Database;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    // The CLI may publish while the server runs: wait for the other writer instead of failing.
    this.db.pragma('busy_timeout = 10000');
    this.keyLookups = new KeyLookupCache(changeSignal(this.db, path));
    // Worker threads need a file to open; an in-memory database builds its pages here.
    this.pageWorkers = path === ':memory:' ? null : new PageWorkers(path);
    this.appendThread = path === ':memory:' ? null : new AppendThread(path);
    this.pageRunner = { workers: this.pageWorkers, runHere: (sql, values) => this.prepare(sql).pluck().get(values) };
    this.demand = new SqliteVariantDemand(this.db);
    this.path = path;
  }

  readonly demand: VariantDemandRepository;
  private readonly path: string;
  private readonly feeds = new Set<SqlitePublicationFeed>();

  publicationFeed(): PublicationFeed {
    const feed: SqlitePublicationFeed = new SqlitePublicationFeed(this.db, this.path, () => this.feeds.delete(feed));
    this.feeds.add(feed);
    return feed;
  }

  private readonly pageWorkers: PageWorkers | null;
  private readonly appendThread: AppendThread | null;
  private readonly pageRunner: PageRunner;

  /**
   * Prepared statements, kept: preparing costs more than running a key look-up, and every
   * request runs the same few. Each SQL text is used in one mode (plain, pluck or raw) only.
   */
  private readonly statements = new Map<string, Database.Statement>();
  private readonly keyLookups: KeyLookupCache;

  private prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
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

  async close(): Promise<void> {
    await this.pageWorkers?.close();
    await this.appendThread?.close();
    this.keyLookups.close();
    this.db.close();
  }

  async createStore(store: NewStore): Promise<StoreRecord> {
    const now = Date.now();
    this.prepare('INSERT INTO stores (id, name, currency, url, company, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(store.id, store.name, store.currency, store.url, store.company, now);
    return { ...store, created_at: date(now) };
  }

  async getStore(id: string): Promise<StoreRecord | null> {
    const row = this.prepare('SELECT * FROM stores WHERE id = ?').get(id) as Row | undefined;
    return row ? storeFrom(row) : null;
  }

  async listStores(): Promise<StoreRecord[]> {
    return (this.prepare('SELECT * FROM stores ORDER BY id').all() as Row[]).map(storeFrom);
  }

  async insertKey(key: NewApiKey): Promise<ApiKeyRecord> {
    const now = Date.now();
    this.prepare('INSERT INTO api_keys (id, store_id, label, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(key.id, key.store_id, key.label, key.prefix, key.hash, now);
    return { id: key.id, store_id: key.store_id, label: key.label, prefix: key.prefix, created_at: date(now), last_used_at: null, revoked_at: null };
  }

  async findKeyByHash(hash: string): Promise<KeyLookup | null> {
    const cached = this.keyLookups.get(hash);
    if (cached) return cached;
    const row = this.prepare(
        `SELECT k.*, s.name AS s_name, s.currency AS s_currency, s.url AS s_url, s.company AS s_company,
                s.created_at AS s_created_at, p.id AS p_id, p.version AS p_version, p.published_at AS p_published_at,
                p.item_count AS p_item_count, p.available_count AS p_available_count, p.currencies AS p_currencies,
                p.category_ids AS p_category_ids
           FROM api_keys k JOIN stores s ON s.id = k.store_id
           LEFT JOIN price_lists p ON p.id = s.latest_price_list_id
          WHERE k.hash = ?`,
      )
      .get(hash) as Row | undefined;
    if (!row) return null;
    const lookup: KeyLookup = {
      key: keyFrom(row),
      store: storeFrom({ id: row.store_id, name: row.s_name, currency: row.s_currency, url: row.s_url, company: row.s_company, created_at: row.s_created_at }),
      latest: row.p_id === null ? null : priceListFrom({
        id: row.p_id, store_id: row.store_id, version: row.p_version, published_at: row.p_published_at, item_count: row.p_item_count,
        available_count: row.p_available_count, currencies: row.p_currencies, category_ids: row.p_category_ids,
      }),
    };
    this.keyLookups.set(hash, lookup);
    return lookup;
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    const row = this.prepare('SELECT * FROM api_keys WHERE id = ?').get(id) as Row | undefined;
    return row ? keyFrom(row) : null;
  }

  async listKeys(storeId: string): Promise<ApiKeyRecord[]> {
    return (this.prepare('SELECT * FROM api_keys WHERE store_id = ? ORDER BY created_at, id').all(storeId) as Row[]).map(keyFrom);
  }

  async touchKey(id: string, at: Date): Promise<void> {
    this.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(at.getTime(), id);
    this.keyLookups.touched(id, at);
  }

  async revokeKey(id: string, at: Date): Promise<ApiKeyRecord | null> {
    this.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at.getTime(), id);
    this.keyLookups.invalidate();
    return this.getKey(id);
  }

  async putProfile(storeId: string, definition: ProfileDefinition, id?: number): Promise<Profile | null> {
    const now = Date.now();
    const json = JSON.stringify(definition);
    if (id === undefined) {
      const info = this.prepare('INSERT INTO profiles (store_id, revision, definition, updated_at) VALUES (?, 1, ?, ?)')
        .run(storeId, json, now);
      return this.getProfile(Number(info.lastInsertRowid));
    }
    const info = this.prepare('UPDATE profiles SET revision = revision + 1, definition = ?, updated_at = ? WHERE id = ? AND store_id = ?')
      .run(json, now, id, storeId);
    return info.changes === 0 ? null : this.getProfile(id);
  }

  async getProfile(id: number): Promise<Profile | null> {
    const row = this.prepare('SELECT * FROM profiles WHERE id = ?').get(id) as Row | undefined;
    return row ? profileFrom(row) : null;
  }

  async listProfiles(storeId: string): Promise<Profile[]> {
    return (this.prepare('SELECT * FROM profiles WHERE store_id = ? ORDER BY id').all(storeId) as Row[]).map(profileFrom);
  }

  async beginPublication(storeId: string): Promise<PublicationDraft> {
    const now = Date.now();
    this.dropPriceLists(
      this.prepare("SELECT id FROM price_lists WHERE store_id = ? AND status = 'draft' AND created_at < ?").pluck().all(storeId, now - STALE_DRAFT_MS) as number[],
    );
    const draftId = Number(
      this.prepare("INSERT INTO price_lists (store_id, status, created_at) VALUES (?, 'draft', ?)").run(storeId, now).lastInsertRowid,
    );
    return new SqliteDraft(this.db, storeId, draftId, (ids) => this.dropPriceLists(ids), () => this.latestChanged(), this.appendThread);
  }

  /** A publication committed on this connection: remembered key look-ups name the old list, and feeds look at the log. */
  private latestChanged(): void {
    this.keyLookups.invalidate();
    for (const feed of this.feeds) feed.nudge();
  }

  async getLatestPriceList(storeId: string): Promise<PriceListRecord | null> {
    const row = this.prepare('SELECT p.* FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = ?')
      .get(storeId) as Row | undefined;
    return row ? priceListFrom(row) : null;
  }

  async listLatestPriceLists(): Promise<LatestPriceList[]> {
    const rows = this.prepare(
        `SELECT p.*, s.name AS s_name, s.currency AS s_currency, s.url AS s_url, s.company AS s_company, s.created_at AS s_created_at
           FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id ORDER BY s.id`,
      )
      .all() as Row[];
    return rows.map((r) => ({
      store: storeFrom({ id: r.store_id, name: r.s_name, currency: r.s_currency, url: r.s_url, company: r.s_company, created_at: r.s_created_at }),
      list: priceListFrom(r),
    }));
  }

  async getCategories(storeId: string, ids: readonly number[]): Promise<CategoryRecord[]> {
    if (ids.length === 0) return [];
    const rows = this.prepare('SELECT c.* FROM categories c JOIN json_each(?) j ON j.value = c.id WHERE c.store_id = ? ORDER BY c.id')
      .all(JSON.stringify(ids), storeId) as Row[];
    return rows.map((r) => ({ id: Number(r.id), store_id: r.store_id as string, path: r.path as string, parent_id: r.parent_id === null ? null : Number(r.parent_id) }));
  }

  async *readItems(priceListId: number, options: ReadItemsOptions): AsyncIterable<PriceItem[]> {
    const batchSize = options.batchSize ?? POSITIONS_PER_PAGE;
    // Each page is one JSON array of rows built by SQLite on a page thread: JSON.parse makes the
    // rows ~2× faster than better-sqlite3 hands them over one by one, and the event loop is not
    // held up while SQLite reads (bench/RESULTS.md, "First XLSX"). `extra` comes as an object.
    // The rows arrive in seq order as renderRecords' do (see there).
    const extra = options.withExtra === false ? 'NULL' : 'json(extra)';
    const query: PageQuery = {
      sql: `SELECT json_group_array(json_array(${STORED_FIELDS.join(', ')}, ${extra}))
              FROM (SELECT ${STORED_FIELDS.join(', ')}, extra FROM price_items
                     WHERE price_list_id = @list AND seq >= @from AND seq < @to ${options.onlyAvailable ? 'AND available = 1' : ''}
                     ORDER BY seq)`,
      params: {},
    };
    // Pages follow positions; batches are of batchSize items (the last may be shorter).
    let batch: PriceItem[] = [];
    for await (const page of listPages<string>(this.pageRunner, priceListId, this.positionBounds(priceListId), query)) {
      for (const row of JSON.parse(page) as unknown[][]) {
        batch.push(itemFromRow(row));
        if (batch.length === batchSize) {
          yield batch;
          batch = [];
        }
      }
    }
    if (batch.length > 0) yield batch;
  }

  startExportThreads(): void {
    this.pageWorkers?.start();
  }

  async *renderRecords(priceListId: number, spec: DelimitedRecordSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> {
    const { expression, params } = compileRecord(spec);
    // Each page is one blob of records made by SQLite, so no row becomes a JavaScript object
    // (bench/RESULTS.md, "First (uncached) CSV"). The subquery hands its rows over in seq order
    // and group_concat joins them in arrival order (`group_concat(… ORDER BY seq)` would sort
    // again, ~35 % slower); delimited-records.contract.test.ts checks the order across pages.
    const query: PageQuery = {
      sql: `SELECT CAST(group_concat(${expression}, '') AS BLOB)
              FROM (SELECT ${STORED_FIELDS.join(', ')}, quote_free FROM price_items
                     WHERE price_list_id = @list AND seq >= @from AND seq < @to ${options.onlyAvailable ? 'AND available = 1' : ''}
                     ORDER BY seq)`,
      params,
    };
    yield* listPages<Uint8Array>(this.pageRunner, priceListId, this.positionBounds(priceListId), query);
  }

  /** The list's first and last position (null, null when it has no items or does not exist). */
  private positionBounds(priceListId: number): [number | null, number | null] {
    // Two subqueries: SQLite answers a lone min() or max() from the primary key, both at once by a scan.
    return this.prepare(
        `SELECT (SELECT min(seq) FROM price_items WHERE price_list_id = @list), (SELECT max(seq) FROM price_items WHERE price_list_id = @list)`,
      )
      .raw(true)
      .get({ list: priceListId }) as [number | null, number | null];
  }

  private dropPriceLists(ids: readonly number[]): void {
    if (ids.length === 0) return;
    const drop = this.db.transaction((list: readonly number[]) => {
      for (const id of list) {
        this.prepare('DELETE FROM price_items WHERE price_list_id = ?').run(id);
        this.prepare('DELETE FROM price_lists WHERE id = ?').run(id);
      }
    });
    drop(ids);
  }
}

class SqliteDraft implements PublicationDraft {
  private readonly insert: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly storeId: string,
    private readonly draftId: number,
    private readonly drop: (ids: readonly number[]) => void,
    /** A new latest list: remembered key look-ups name the old one. */
    private readonly latestChanged: () => void,
    /** Where the rows are inserted; null: on this connection (an in-memory database). */
    private readonly appendThread: AppendThread | null,
  ) {
    this.insert = db.prepare(INSERT_ITEM_SQL);
  }

  async append(items: readonly SequencedItem[]): Promise<DuplicateOffer[]> {
    const rows = items.map(({ seq, item }) => itemInsertValues(this.draftId, seq, item));
    let refused: number[];
    if (this.appendThread) {
      refused = await this.appendThread.append(rows);
    } else {
      refused = [];
      this.db.transaction(() => {
        for (const row of rows) if (this.insert.run(row).changes === 0) refused.push(row[1] as number);
      })();
    }
    if (refused.length === 0) return [];
    const offerOf = new Map(items.map(({ seq, item }) => [seq, item.offer_id]));
    return refused.map((seq) => ({ seq, offer_id: offerOf.get(seq)! }));
  }

  async commit(summary: PublicationSummary): Promise<PriceListRecord> {
    let now = 0;
    const commit = this.db.transaction(() => {
      // Taken under the write lock, so a later version never gets an earlier publication time.
      now = Date.now();
      const categoryIds = this.ensureCategories(summary.category_paths);
      const { last_version: version } = this.db
        .prepare('UPDATE stores SET last_version = last_version + 1 WHERE id = ? RETURNING last_version')
        .get(this.storeId) as { last_version: number };
      this.db
        .prepare(
          `UPDATE price_lists SET status = 'published', version = ?, published_at = ?, item_count = ?, available_count = ?,
                  currencies = ?, category_ids = ? WHERE id = ?`,
        )
        .run(version, now, summary.item_count, summary.available_count, JSON.stringify(summary.currencies), JSON.stringify(categoryIds), this.draftId);
      this.db
        .prepare("UPDATE price_lists SET superseded_at = ? WHERE store_id = ? AND status = 'published' AND superseded_at IS NULL AND id <> ?")
        .run(now, this.storeId, this.draftId);
      this.db.prepare('UPDATE stores SET latest_price_list_id = ? WHERE id = ?').run(this.draftId, this.storeId);
      return this.db
        .prepare("SELECT id FROM price_lists WHERE store_id = ? AND status = 'published' AND superseded_at < ?")
        .pluck()
        .all(this.storeId, now - SUPERSEDED_GRACE_MS) as number[];
    });
    const expired = commit.immediate();
    this.latestChanged();
    this.drop(expired);
    const row = this.db.prepare('SELECT * FROM price_lists WHERE id = ?').get(this.draftId) as Row;
    return priceListFrom(row);
  }

  async abort(): Promise<void> {
    this.drop([this.draftId]);
  }

  /** Ids for every level of every path, creating the missing ones; ids never change once given. */
  private ensureCategories(paths: readonly string[]): number[] {
    const find = this.db.prepare('SELECT id FROM categories WHERE store_id = ? AND path = ?').pluck();
    const create = this.db.prepare('INSERT INTO categories (store_id, path, parent_id) VALUES (?, ?, ?)');
    const ids = new Map<string, number>();
    for (const path of categoryLevels(paths)) {
      let id = find.get(this.storeId, path) as number | undefined;
      if (id === undefined) {
        const parent = parentPath(path);
        id = Number(create.run(this.storeId, path, parent === null ? null : ids.get(parent)).lastInsertRowid);
      }
      ids.set(path, id);
    }
    return [...ids.values()];
  }
}
