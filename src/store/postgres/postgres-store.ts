import { once } from 'node:events';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { DelimitedRecordSpec } from '../../model/delimited-record.js';
import type { Profile, ProfileDefinition } from '../../model/profile.js';
import type { PriceItem } from '../../model/price-item.js';
import { categoryLevels, extraJson, ITEM_COLUMNS, itemFromRow, LEGACY_ITEM_COLUMNS, parentPath, STALE_DRAFT_MS, SUPERSEDED_GRACE_MS } from '../item-row.js';
import type {
  ApiKeyRecord, CategoryRecord, DuplicateOffer, KeyLookup, LatestPriceList, NewApiKey, NewStore, PriceListRecord, PublicationDraft,
  PublicationSummary, ReadItemsOptions, SequencedItem, Store, StoreRecord,
} from '../types.js';
import { compilePgRecord } from './delimited-sql.js';
import { MIGRATION_LOCK_KEY, POSTGRES_MIGRATIONS } from './schema.js';
import { PostgresPublicationFeed } from './publication-feed.js';
import { PostgresVariantDemand } from './variant-demand.js';
import type { PublicationFeed, VariantDemandRepository } from '../warming-types.js';

type Row = Record<string, unknown>;
type Client = pg.ClientBase;

/**
 * int8 comes back as Number, for this pool only (not pg's global parser, which other code may
 * rely on): ids, money in minor units and quantities all stay far below 2^53.
 */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

const dateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : (value as Date));

const storeFrom = (r: Row): StoreRecord => ({
  id: r.id as string, name: r.name as string, currency: r.currency as string,
  url: (r.url as string | null) ?? null, company: (r.company as string | null) ?? null, created_at: r.created_at as Date,
});
const keyFrom = (r: Row): ApiKeyRecord => ({
  id: r.id as string, store_id: r.store_id as string, label: (r.label as string | null) ?? null, prefix: r.prefix as string,
  created_at: r.created_at as Date, last_used_at: dateOrNull(r.last_used_at), revoked_at: dateOrNull(r.revoked_at),
});
const priceListFrom = (r: Row): PriceListRecord => ({
  id: Number(r.id), store_id: r.store_id as string, version: Number(r.version), published_at: r.published_at as Date,
  item_count: Number(r.item_count), available_count: Number(r.available_count),
  currencies: r.currencies as string[], category_ids: r.category_ids as number[],
});
const profileFrom = (r: Row): Profile => ({
  ...(JSON.parse(r.definition as string) as ProfileDefinition),
  id: Number(r.id), store_id: r.store_id as string, revision: Number(r.revision), updated_at: r.updated_at as Date,
});

const KEY_COLUMNS = 'k.id, k.store_id, k.label, k.prefix, k.created_at, k.last_used_at, k.revoked_at';
const LIST_COLUMNS = 'id, store_id, version, published_at, item_count, available_count, currencies, category_ids';

/**
 * The server store. Times come from the database clock, so every instance agrees on what
 * "stale" and "superseded 15 minutes ago" mean.
 */
/** Reads on a request's path give up after this (the request then answers 503 instead of hanging). */
const REQUEST_READ_MS = 5_000;

/** Items per page of renderRecords: ~350 KiB of records. */
const RECORDS_PER_PAGE = 5000;

/** pg honours a per-query `query_timeout` (client side); @types/pg only lists it on the client config. */
function timed<T extends object>(config: T, ms = REQUEST_READ_MS): T {
  return Object.assign(config, { query_timeout: ms });
}

export class PostgresStore implements Store {
  readonly dialect = 'postgres';
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string) {
    // A partitioned network must not hang requests: new connections give up after 3 s and dead
    // ones are noticed by TCP keepalive; request-path reads carry their own timeout (REQUEST_READ_MS).
    this.pool = new pg.Pool({ connectionString: databaseUrl, types: TYPES, connectionTimeoutMillis: 3_000, keepAlive: true });
    // An idle client whose server went away emits 'error'; without a listener that kills the
    // process. The pool drops the client, and the next query reports the outage (ping → 503).
    this.pool.on('error', () => {});
    this.demand = new PostgresVariantDemand(this.pool);
    this.databaseUrl = databaseUrl;
  }

  readonly demand: VariantDemandRepository;
  private readonly databaseUrl: string;

  /** Its own connection, outside the pool: a LISTEN lives as long as its session. */
  publicationFeed(): PublicationFeed {
    return new PostgresPublicationFeed(this.databaseUrl);
  }

  async migrate(): Promise<void> {
    // One transaction (PostgreSQL DDL is transactional) under an advisory lock: a second
    // instance starting at once waits, then finds every migration applied.
    await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)');
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => r.version));
      for (const [index, sql] of POSTGRES_MIGRATIONS.entries()) {
        const version = index + 1;
        if (applied.has(version)) continue;
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())', [version]);
      }
    });
  }

  async ping(): Promise<void> {
    await this.pool.query(timed({ text: 'SELECT 1' }, 2_000));
  }

  async pendingMigrations(): Promise<number> {
    const { rows } = await this.pool.query<{ applied: number | null }>(timed({
      text: "SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN NULL ELSE (SELECT count(*)::int FROM schema_migrations WHERE version <= $1) END AS applied",
      values: [POSTGRES_MIGRATIONS.length],
    }, 2_000));
    return POSTGRES_MIGRATIONS.length - (rows[0].applied ?? 0);
  }

  poolUse(): { total: number; idle: number; waiting: number; max: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount, max: this.pool.options.max ?? 10 };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async createStore(store: NewStore): Promise<StoreRecord> {
    const { rows } = await this.pool.query(
      'INSERT INTO stores (id, name, currency, url, company, created_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING created_at',
      [store.id, store.name, store.currency, store.url, store.company],
    );
    return { ...store, created_at: rows[0].created_at as Date };
  }

  async getStore(id: string): Promise<StoreRecord | null> {
    const { rows } = await this.pool.query('SELECT * FROM stores WHERE id = $1', [id]);
    return rows[0] ? storeFrom(rows[0]) : null;
  }

  async listStores(): Promise<StoreRecord[]> {
    return (await this.pool.query('SELECT * FROM stores ORDER BY id')).rows.map(storeFrom);
  }

  async insertKey(key: NewApiKey): Promise<ApiKeyRecord> {
    const { rows } = await this.pool.query(
      'INSERT INTO api_keys (id, store_id, label, prefix, hash, created_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING *',
      [key.id, key.store_id, key.label, key.prefix, key.hash],
    );
    return keyFrom(rows[0]);
  }

  async findKeyByHash(hash: string): Promise<KeyLookup | null> {
    const { rows } = await this.pool.query(timed({ text: `SELECT ${KEY_COLUMNS}, s.name AS s_name, s.currency AS s_currency, s.url AS s_url, s.company AS s_company,
              s.created_at AS s_created_at, p.id AS p_id, p.version AS p_version, p.published_at AS p_published_at,
              p.item_count AS p_item_count, p.available_count AS p_available_count, p.currencies AS p_currencies,
              p.category_ids AS p_category_ids
         FROM api_keys k JOIN stores s ON s.id = k.store_id
         LEFT JOIN price_lists p ON p.id = s.latest_price_list_id
        WHERE k.hash = $1`, values: [hash] }));
    const row = rows[0] as Row | undefined;
    if (!row) return null;
    return {
      key: keyFrom(row),
      store: storeFrom({ id: row.store_id, name: row.s_name, currency: row.s_currency, url: row.s_url, company: row.s_company, created_at: row.s_created_at }),
      latest: row.p_id === null ? null : priceListFrom({
        id: row.p_id, store_id: row.store_id, version: row.p_version, published_at: row.p_published_at, item_count: row.p_item_count,
        available_count: row.p_available_count, currencies: row.p_currencies, category_ids: row.p_category_ids,
      }),
    };
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.pool.query('SELECT * FROM api_keys WHERE id = $1', [id]);
    return rows[0] ? keyFrom(rows[0]) : null;
  }

  async listKeys(storeId: string): Promise<ApiKeyRecord[]> {
    return (await this.pool.query('SELECT * FROM api_keys WHERE store_id = $1 ORDER BY created_at, id', [storeId])).rows.map(keyFrom);
  }

  async touchKey(id: string, at: Date): Promise<void> {
    await this.pool.query(timed({ text: 'UPDATE api_keys SET last_used_at = $1 WHERE id = $2', values: [at, id] }));
  }

  async revokeKey(id: string, at: Date): Promise<ApiKeyRecord | null> {
    await this.pool.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
    return this.getKey(id);
  }

  async putProfile(storeId: string, definition: ProfileDefinition, id?: number): Promise<Profile | null> {
    const json = JSON.stringify(definition);
    const { rows } = id === undefined
      ? await this.pool.query('INSERT INTO profiles (store_id, revision, definition, updated_at) VALUES ($1, 1, $2, now()) RETURNING *', [storeId, json])
      : await this.pool.query(
        'UPDATE profiles SET revision = revision + 1, definition = $1, updated_at = now() WHERE id = $2 AND store_id = $3 RETURNING *',
        [json, id, storeId],
      );
    return rows[0] ? profileFrom(rows[0]) : null;
  }

  async getProfile(id: number): Promise<Profile | null> {
    const { rows } = await this.pool.query(timed({ text: 'SELECT * FROM profiles WHERE id = $1', values: [id] }));
    return rows[0] ? profileFrom(rows[0]) : null;
  }

  async listProfiles(storeId: string): Promise<Profile[]> {
    return (await this.pool.query(timed({ text: 'SELECT * FROM profiles WHERE store_id = $1 ORDER BY id', values: [storeId] }))).rows.map(profileFrom);
  }

  async beginPublication(storeId: string): Promise<PublicationDraft> {
    const { rows: stale } = await this.pool.query<{ id: number }>(
      "SELECT id FROM price_lists WHERE store_id = $1 AND status = 'draft' AND created_at < now() - $2 * interval '1 millisecond'",
      [storeId, STALE_DRAFT_MS],
    );
    await this.dropPriceLists(stale.map((r) => r.id));
    const { rows } = await this.pool.query<{ id: number }>(
      "INSERT INTO price_lists (store_id, status, created_at) VALUES ($1, 'draft', now()) RETURNING id",
      [storeId],
    );
    return new PostgresDraft(this, storeId, rows[0].id);
  }

  async getLatestPriceList(storeId: string): Promise<PriceListRecord | null> {
    const { rows } = await this.pool.query(timed({ text: `SELECT ${LIST_COLUMNS.replace(/\w+/g, 'p.$&')} FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = $1`, values: [storeId] }));
    return rows[0] ? priceListFrom(rows[0]) : null;
  }

  async listLatestPriceLists(): Promise<LatestPriceList[]> {
    const { rows } = await this.pool.query(timed({ text: `SELECT ${LIST_COLUMNS.replace(/\w+/g, 'p.$&')}, s.name AS s_name, s.currency AS s_currency,
              s.url AS s_url, s.company AS s_company, s.created_at AS s_created_at
         FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id ORDER BY s.id` }));
    return rows.map((r: Row) => ({
      store: storeFrom({ id: r.store_id, name: r.s_name, currency: r.s_currency, url: r.s_url, company: r.s_company, created_at: r.s_created_at }),
      list: priceListFrom(r),
    }));
  }

  async getCategories(storeId: string, ids: readonly number[]): Promise<CategoryRecord[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.pool.query(timed({ text: 'SELECT id, store_id, path, parent_id FROM categories WHERE store_id = $1 AND id = ANY($2::bigint[]) ORDER BY id', values: [storeId, ids] }));
    return rows.map((r) => ({ id: Number(r.id), store_id: r.store_id, path: r.path, parent_id: r.parent_id === null ? null : Number(r.parent_id) }));
  }

  async *readItems(priceListId: number, options: ReadItemsOptions): AsyncIterable<PriceItem[]> {
    const batchSize = options.batchSize ?? 5000;
    // Keyset pages, each its own statement: a slow download holds no transaction or
    // connection between pages. A list is immutable, so the pages are consistent.
    const text = `SELECT seq, ${options.withExtra === false ? LEGACY_ITEM_COLUMNS : ITEM_COLUMNS} FROM price_items
                   WHERE price_list_id = $1 AND seq > $2 ${options.onlyAvailable ? 'AND available' : ''}
                   ORDER BY seq LIMIT $3`;
    let after = -1;
    for (;;) {
      const { rows } = await this.pool.query<unknown[]>(timed({ text, values: [priceListId, after, batchSize], rowMode: 'array' }));
      if (rows.length === 0) return;
      after = Number(rows[rows.length - 1][0]);
      yield rows.map((row) => itemFromRow(row, 1));
      if (rows.length < batchSize) return;
    }
  }

  async *renderRecords(priceListId: number, spec: DelimitedRecordSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> {
    const { expression, values } = compilePgRecord(spec, 4);
    // PostgreSQL builds each page of records in its own process, keyset pages as in readItems;
    // the next page is asked for before this one is handed on, so both sides work at once.
    const text = `SELECT max(seq), count(*)::int, string_agg(line, '' ORDER BY seq)
                    FROM (SELECT seq, ${expression} AS line FROM price_items
                           WHERE price_list_id = $1 AND seq > $2 ${options.onlyAvailable ? 'AND available' : ''}
                           ORDER BY seq LIMIT $3) page`;
    const page = (after: number) => {
      const asked = this.pool.query<[number | null, number, string | null]>(timed({ text, values: [priceListId, after, RECORDS_PER_PAGE, ...values], rowMode: 'array' }));
      // A page asked for ahead may fail while the consumer is elsewhere: thrown when awaited.
      asked.catch(() => undefined);
      return asked;
    };
    let next = page(-1);
    for (;;) {
      const [last, count, records] = (await next).rows[0];
      if (last === null || records === null) return;
      const more = count === RECORDS_PER_PAGE;
      if (more) next = page(Number(last));
      yield Buffer.from(records, 'utf8');
      if (!more) return;
    }
  }

  /** Runs `work` in one transaction on one pooled connection. */
  async transaction<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is discarded rather than returned to the pool.
      await client.query('ROLLBACK').catch((rollbackError: Error) => { broken = rollbackError; });
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Runs `work` on one pooled connection, discarding the connection if it fails. */
  async withClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      const result = await work(client);
      client.release();
      return result;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  async dropPriceLists(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.transaction(async (client) => {
      await client.query('DELETE FROM price_items WHERE price_list_id = ANY($1::bigint[])', [ids]);
      await client.query('DELETE FROM price_lists WHERE id = ANY($1::bigint[])', [ids]);
    });
  }
}

/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505';
const INSERT_COLUMNS = `price_list_id, seq, ${ITEM_COLUMNS}`;

class PostgresDraft implements PublicationDraft {
  constructor(
    private readonly store: PostgresStore,
    private readonly storeId: string,
    private readonly draftId: number,
  ) {}

  /**
   * COPY straight into price_items is the fast path. A repeated offer_id makes the unique index
   * fail the whole COPY (nothing of it stays); that batch is then inserted again row-wise with
   * ON CONFLICT DO NOTHING, whose RETURNING tells which rows were duplicates. A bad publication
   * pays twice for one batch; a good one never does.
   */
  async append(items: readonly SequencedItem[]): Promise<DuplicateOffer[]> {
    if (items.length === 0) return [];
    try {
      await this.copy(items);
      return [];
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
    }
    return this.insertSkippingDuplicates(items);
  }

  private async copy(items: readonly SequencedItem[]): Promise<void> {
    const data = copyText(this.draftId, items);
    await this.store.withClient(async (client) => {
      const stream = client.query(copyFrom(`COPY price_items (${INSERT_COLUMNS}) FROM STDIN`));
      const done = once(stream, 'finish');
      stream.end(data);
      await done;
    });
  }

  private async insertSkippingDuplicates(items: readonly SequencedItem[]): Promise<DuplicateOffer[]> {
    const columns: unknown[][] = Array.from({ length: 10 }, () => []);
    for (const { seq, item } of items) {
      const values = [seq, item.offer_id, item.name, item.price, item.old_price, item.currency, item.available, item.quantity, item.url, extraJson(item)];
      values.forEach((value, i) => columns[i].push(value));
    }
    // One array parameter per column (not one parameter per value): any batch size fits
    // under PostgreSQL's 65535-parameter bound. Rows go in batch order, so of two equal ids the
    // first one stays, as in SQLite.
    const inserted = await this.store.withClient((client) =>
      client.query<{ seq: number }>(
        `INSERT INTO price_items (${INSERT_COLUMNS})
         SELECT $1::bigint, seq, offer_id, name, price, old_price, currency, available, quantity, url, extra
           FROM unnest($2::int[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::boolean[],
                       $9::bigint[], $10::text[], $11::text[]) WITH ORDINALITY
                AS t(seq, offer_id, name, price, old_price, currency, available, quantity, url, extra, position)
          ORDER BY t.position
         ON CONFLICT (price_list_id, offer_id) DO NOTHING RETURNING seq`,
        [this.draftId, ...columns],
      ),
    );
    const kept = new Set(inserted.rows.map((r) => r.seq));
    return items.filter(({ seq }) => !kept.has(seq)).map(({ seq, item }) => ({ seq, offer_id: item.offer_id }));
  }

  async commit(summary: PublicationSummary): Promise<PriceListRecord> {
    const { record, expired } = await this.store.transaction(async (client) => {
      // The store row's lock serializes publications of one store. The time is read after the
      // lock, so a later version never gets an earlier published_at (Last-Modified would go back).
      const bumped = await client.query<{ last_version: number; now: Date }>(
        'UPDATE stores SET last_version = last_version + 1, latest_price_list_id = $2 WHERE id = $1 RETURNING last_version, clock_timestamp() AS now',
        [this.storeId, this.draftId],
      );
      const { last_version: version, now } = bumped.rows[0];
      const categoryIds = await ensureCategories(client, this.storeId, summary.category_paths);
      const published = await client.query(
        `UPDATE price_lists SET status = 'published', version = $2, published_at = $3, item_count = $4, available_count = $5,
                currencies = $6, category_ids = $7
          WHERE id = $1 AND status = 'draft' RETURNING ${LIST_COLUMNS}`,
        [this.draftId, version, now, summary.item_count, summary.available_count, JSON.stringify(summary.currencies), JSON.stringify(categoryIds)],
      );
      if (published.rowCount !== 1) throw new Error(`publication draft ${this.draftId} no longer exists (removed as stale?)`);
      await client.query(
        "UPDATE price_lists SET superseded_at = $3 WHERE store_id = $1 AND status = 'published' AND superseded_at IS NULL AND id <> $2",
        [this.storeId, this.draftId, now],
      );
      const old = await client.query<{ id: number }>(
        "SELECT id FROM price_lists WHERE store_id = $1 AND status = 'published' AND superseded_at < $2",
        [this.storeId, new Date(now.getTime() - SUPERSEDED_GRACE_MS)],
      );
      return { record: priceListFrom(published.rows[0]), expired: old.rows.map((r) => r.id) };
    });
    await this.store.dropPriceLists(expired);
    return record;
  }

  async abort(): Promise<void> {
    await this.store.dropPriceLists([this.draftId]);
  }
}

/**
 * Ids for every level of every path, creating the missing ones; ids never change once given.
 * One INSERT per depth, so a parent exists before its children look up its id. Runs under the
 * store row's lock, so no other publication of this store creates categories meanwhile.
 */
async function ensureCategories(client: Client, storeId: string, paths: readonly string[]): Promise<number[]> {
  const levels = categoryLevels(paths);
  if (levels.length === 0) return [];
  const byDepth = new Map<number, string[]>();
  for (const path of levels) {
    const depth = path.split(' / ').length;
    byDepth.set(depth, [...(byDepth.get(depth) ?? []), path]);
  }
  for (const group of byDepth.values()) {
    await client.query(
      `INSERT INTO categories (store_id, path, parent_id)
       SELECT $1, l.path, p.id FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS l(path, parent, n)
         LEFT JOIN categories p ON p.store_id = $1 AND p.path = l.parent
        ORDER BY l.n
       ON CONFLICT (store_id, path) DO NOTHING`,
      [storeId, group, group.map(parentPath)],
    );
  }
  const { rows } = await client.query<{ id: number; path: string }>(
    'SELECT id, path FROM categories WHERE store_id = $1 AND path = ANY($2::text[])',
    [storeId, levels],
  );
  const ids = new Map(rows.map((r) => [r.path, r.id]));
  return levels.map((path) => ids.get(path)!);
}

/** COPY text format: tab-separated, `\N` for null, backslash escapes for the separators. */
function copyText(draftId: number, items: readonly SequencedItem[]): string {
  let out = '';
  for (const { seq, item } of items) {
    const extra = extraJson(item);
    out += `${draftId}\t${seq}\t${copyValue(item.offer_id)}\t${copyValue(item.name)}\t${item.price}\t${item.old_price ?? '\\N'}\t`
      + `${copyValue(item.currency)}\t${item.available ? 't' : 'f'}\t${item.quantity ?? '\\N'}\t`
      + `${item.url === null ? '\\N' : copyValue(item.url)}\t${extra === null ? '\\N' : copyValue(extra)}\n`;
  }
  return out;
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyValue(text: string): string {
  return COPY_SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : text;
}
