import { Socket } from 'node:net';
import pg from 'pg';
import { categoryLevels, parentPath } from '../item-row.js';
import type { ColumnKind, Query, QueryResult, SqlDialect, Steps } from '../sql/dialect.js';
import { binaryCopyRows } from './binary-copy-rows.js';
import { copyIn } from './copy-in.js';
import { PostgresItems } from './items.js';
import { copyRecordsModule } from './native-copy-records.js';
import { oneBufferSocket } from './one-buffer-socket.js';
import type { PostgresListener } from './listener.js';
import { watchOutbox } from './outbox-watch.js';
import { PostgresPublicationFeed } from './publication-feed.js';
import { MIGRATION_LOCK_KEY, POSTGRES_MIGRATIONS } from './schema.js';

type Client = pg.ClientBase;

/**
 * int8 comes back as Number, for this pool only (not pg's global parser, which other code may
 * rely on): ids, money in minor units and quantities all stay far below 2^53.
 */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * A pooled connection's socket: pg calls this with the connection's settings. Without TLS it reads
 * into one buffer (one-buffer-socket.ts says why); with TLS, pg's own plain socket, as pg makes it
 * (TLS then reads the socket itself).
 */
const connectionSocket = ((settings: { ssl?: unknown }) => (settings.ssl ? new Socket() : oneBufferSocket())) as unknown as () => Socket;

/** Reads on a request's path give up after this (the request then answers 503 instead of hanging). */
const REQUEST_READ_MS = 5_000;

/** pg honours a per-query `query_timeout` (client side); @types/pg only lists it on the client config. */
function timed<T extends object>(config: T, ms = REQUEST_READ_MS): T {
  return Object.assign(config, { query_timeout: ms });
}

/** Shared SQL's `?` placeholders as `$1, $2, …`, worked out once per text. */
const numbered = new Map<string, string>();
/** A shared-SQL statement as pg's query config: placeholders numbered, prepared under its name if it has one. */
const pgQuery = ({ sql, params, prepared }: Query) => ({ name: prepared, text: numberPlaceholders(sql), values: params as unknown[] });
const resultOf = (result: pg.QueryResult): QueryResult => ({ rows: result.rows, changes: result.rowCount ?? 0 });

/** One statement on a checked-out connection: a COPY with its data, or a (prepared) query. */
async function runOn(client: pg.ClientBase, query: Query): Promise<QueryResult> {
  if (query.copy) return { rows: [], changes: await copyIn(client, query.sql, [query.copy]) };
  return resultOf(await client.query(pgQuery(query)));
}

function numberPlaceholders(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, text);
  }
  return text;
}

/**
 * Set on each pooled connection as it opens, before its first query (the pool's onConnect), as
 * `SET`s, not the startup packet's `options`: PgBouncer refuses a connection that asks for
 * startup parameters it does not know (test/multi-instance/pgbouncer.test.ts).
 * - extra_float_digits ≥ 1 (the default since PostgreSQL 12): JSON exports print amounts with
 *   float8's shortest text (json-sql.ts pgJsonMoney); a server or database configured otherwise
 *   would print other digits.
 * - No JIT: the planner guesses a list's rows from price_items' size (~20,000 at 5M rows, where a
 *   store's list held 200), and once a statement's guessed cost passed jit_above_cost every
 *   publication's change recording compiled its expressions first: a publish storm of 5,000
 *   stores took twice as long from its fifth round (bench/RESULTS.md, "2026-12-07, noon").
 */
const SESSION_SETTINGS = 'SET extra_float_digits = 1; SET jit = off';

/** The pooled connections' name in pg_stat_activity (the listeners have their own). */
export const POOL_APPLICATION_NAME = 'price-export';

/** The delivery ledger's column types (schema.ts), for its rows bound as arrays (rowsQuery). */
const POSTGRES_TYPES: Record<ColumnKind, string> = { text: 'text', integer: 'integer', bigint: 'bigint', boolean: 'boolean', time: 'timestamptz' };

/**
 * The server database. Times come from the database clock, so every instance agrees on what
 * "stale" and "superseded 15 minutes ago" mean.
 */
export class PostgresDialect implements SqlDialect {
  readonly name = 'postgres';
  readonly now = 'clock_timestamp()';
  readonly keyLookups = null;
  private readonly pool: pg.Pool;
  readonly items: PostgresItems;
  readonly nativeRecords: boolean;

  /**
   * `nativeRecords: false` builds every page by the server's SQL even where the C module was built
   * (the tests compare both); `poolSize`: connections the pool opens at most (node-postgres' 10 when absent).
   */
  constructor(databaseUrl: string, options: { nativeRecords?: boolean; poolSize?: number } = {}) {
    // A partitioned network must not hang requests: new connections give up after 3 s and dead
    // ones are noticed by TCP keepalive; request-path reads carry their own timeout (REQUEST_READ_MS).
    // Named in pg_stat_activity, as the listening connections are, so an operator can count a
    // fleet's connections against max_connections (an application_name in the URL wins).
    this.pool = new pg.Pool({
      connectionString: databaseUrl, types: TYPES, connectionTimeoutMillis: 3_000, keepAlive: true, stream: connectionSocket,
      application_name: POOL_APPLICATION_NAME, ...(options.poolSize === undefined ? {} : { max: options.poolSize }),
      // Awaited before the connection is handed out; if it fails, the pool ends the connection and
      // its caller gets the error. Timed as a request's read: a connection that went silent must
      // not hold its caller forever.
      onConnect: async (client) => { await client.query(timed({ text: SESSION_SETTINGS })); },
    });
    // An idle client whose server went away emits 'error'; without a listener that kills the
    // process. The pool drops the client, and the next query reports the outage (ping → 503).
    this.pool.on('error', () => {});
    this.databaseUrl = databaseUrl;
    const records = options.nativeRecords === false ? null : copyRecordsModule();
    this.nativeRecords = records !== null;
    this.items = new PostgresItems({ pool: this.pool, withClient: (work) => this.withClient(work), timed: (config) => timed(config), records });
  }

  private readonly databaseUrl: string;
  private readonly watches = new Set<PostgresListener>();

  /** Its own connection, outside the pool: a LISTEN lives as long as its session. */
  publicationFeed(): PostgresPublicationFeed {
    return new PostgresPublicationFeed(this.databaseUrl);
  }

  /** Queued webhook events, on a listening connection of their own (outbox-watch.ts); stopped by close() too. */
  watchAnnouncements(listener: () => void, onError?: (error: unknown) => void): () => void {
    const watch = watchOutbox(this.databaseUrl, listener, onError);
    this.watches.add(watch);
    // Kept until its connection has ended: close() waits for it.
    return () => void watch.close().finally(() => this.watches.delete(watch));
  }

  async query(query: Query): Promise<QueryResult> {
    // A COPY streams its data on a connection of its own; anything else goes through the pool.
    if (query.copy) return this.withClient((client) => runOn(client, query));
    const config = pgQuery(query);
    return resultOf(await this.pool.query(query.request ? timed(config) : config));
  }

  transaction<T>(steps: Steps<T>): Promise<T> {
    return this.clientTransaction(async (client) => {
      let step = steps.next();
      while (!step.done) step = steps.next(await runOn(client, step.value));
      return step.value;
    });
  }

  time(value: unknown): Date {
    return value as Date;
  }

  timeParam(at: Date): unknown {
    return at;
  }

  json<T>(value: unknown): T {
    return (typeof value === 'string' ? JSON.parse(value) : value) as T;
  }

  ago(ms: number): string {
    return `(clock_timestamp() - ${Math.trunc(ms)} * interval '1 millisecond')`;
  }

  anyId(column: string): string {
    return `${column} = ANY(?::bigint[])`;
  }

  ids(ids: readonly number[]): unknown {
    return ids;
  }

  /**
   * One array a column, unnested: one text for any number of rows and a parameter a column.
   * A VALUES list of a batch's 67 runs was 1,072 parameters, and its text new for each number of
   * rows: parsing, planning and binding them took more than the statements' own work (the
   * ledger's batch of 67 seldom consumers written in 8.8–10.4 ms; this way, kept prepared,
   * 4.4–5.5: bench/RESULTS.md, "2026-12-07").
   */
  rowsQuery(kinds: readonly ColumnKind[]): string {
    const columns = kinds.map((kind) => `CAST(? AS ${POSTGRES_TYPES[kind]}[])`).join(', ');
    return `SELECT * FROM unnest(${columns}) AS u(${kinds.map((_, i) => `column${i + 1}`).join(', ')})`;
  }

  /** All of them (up to `most`): the text is one for any number of rows, and each statement a round trip. */
  rowsInStatement(left: number, most: number): number {
    return Math.min(left, most);
  }

  rowsParams(kinds: readonly ColumnKind[], values: readonly unknown[]): unknown[] {
    const width = kinds.length;
    return kinds.map((_, column) => {
      const of: unknown[] = [];
      for (let i = column; i < values.length; i += width) of.push(values[i]);
      return of;
    });
  }

  copyRows(table: string, columns: readonly string[], kinds: readonly ColumnKind[], values: readonly unknown[]): Query {
    return { sql: `COPY ${table} (${columns.join(', ')}) FROM STDIN (FORMAT binary)`, params: [], copy: binaryCopyRows(kinds, values) };
  }

  anyText(column: string): string {
    return `${column} = ANY(?::text[])`;
  }

  texts(values: readonly string[]): unknown {
    return values;
  }

  /**
   * Ids for every level of every path, creating the missing ones; ids never change once given.
   * One INSERT per depth, so a parent exists before its children look up its id. Runs under the
   * store row's lock, so no other publication of this store creates categories meanwhile.
   */
  *ensureCategories(storeId: string, paths: readonly string[]): Steps<number[]> {
    const levels = categoryLevels(paths);
    if (levels.length === 0) return [];
    const byDepth = new Map<number, string[]>();
    for (const path of levels) {
      const depth = path.split(' / ').length;
      byDepth.set(depth, [...(byDepth.get(depth) ?? []), path]);
    }
    for (const group of byDepth.values()) {
      yield {
        sql: `INSERT INTO categories (store_id, path, parent_id)
              SELECT $1, l.path, p.id FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS l(path, parent, n)
                LEFT JOIN categories p ON p.store_id = $1 AND p.path = l.parent
               ORDER BY l.n
              ON CONFLICT (store_id, path) DO NOTHING`,
        params: [storeId, group, group.map(parentPath)],
      };
    }
    const { rows } = yield { sql: 'SELECT id, path FROM categories WHERE store_id = $1 AND path = ANY($2::text[])', params: [storeId, levels] };
    const ids = new Map(rows.map((r) => [r.path as string, Number(r.id)]));
    return levels.map((path) => ids.get(path)!);
  }

  async migrate(): Promise<void> {
    // One transaction (PostgreSQL DDL is transactional) under an advisory lock: a second
    // instance starting at once waits, then finds every migration applied.
    await this.clientTransaction(async (client) => {
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

  startThreads(): void {
    // Nothing to start: the pool connects on demand.
  }

  async close(): Promise<void> {
    await Promise.all([...this.watches].map((watch) => watch.close()));
    this.watches.clear();
    await this.pool.end();
  }

  /** Runs `work` in one transaction on one pooled connection. */
  private async clientTransaction<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const { client, lost, done } = await this.checkOut();
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
      done(broken ?? lost());
    }
  }

  /** Runs `work` on one pooled connection, discarding the connection if it fails. */
  private async withClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
    const { client, lost, done } = await this.checkOut();
    try {
      const result = await work(client);
      done(lost());
      return result;
    } catch (error) {
      done(error as Error);
      throw error;
    }
  }

  /**
   * A pooled connection with a listener for its 'error' event while it is checked out. The pool
   * listens only to idle connections; a checked-out one whose socket dies (a network partition
   * ending, the server restarting) emits 'error' besides failing its query, and with no listener
   * that event ended the process (crash-safety.test.ts, "the database silent").
   */
  private async checkOut(): Promise<{ client: pg.PoolClient; lost: () => Error | undefined; done: (broken?: Error) => void }> {
    const client = await this.pool.connect();
    let lostWith: Error | undefined;
    const onError = (error: Error) => { lostWith = error; };
    client.on('error', onError);
    return {
      client,
      lost: () => lostWith,
      done: (broken) => {
        client.off('error', onError);
        client.release(broken);
      },
    };
  }
}
