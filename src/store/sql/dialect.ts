import type { RecordSpec } from '../../model/record-spec.js';
import type { PriceItem } from '../../model/price-item.js';
import type { DuplicateOffer, ItemRowReader, ItemRows, KeyLookup, ReadItemsOptions, SequencedItem } from '../types.js';
import type { PublicationFeed } from '../warming-types.js';
import type { ChangeRecords, ChangeRecordSpecs } from '../changes-types.js';

/*
 * What the shared SQL base (sql-database.ts and the repositories beside it) needs from a
 * dialect, after kysely's DialectAdapter: how to run a statement and a transaction, how
 * times and JSON columns come back, the few SQL texts that differ, and the parts that are a
 * dialect's own mechanism (SQLite's page and append threads, PostgreSQL's COPY). Everything
 * else — the mappers, the key and latest-list queries, the publication state machine — is
 * written once in sql/.
 */

export type Row = Record<string, unknown>;

/** What a column holds, as far as binding its values goes (SqlDialect.rowsQuery). */
export type ColumnKind = 'text' | 'integer' | 'bigint' | 'boolean' | 'time';

/** One statement. Shared SQL uses `?` placeholders; a dialect rewrites them if it must. */
export interface Query {
  sql: string;
  params: readonly unknown[];
  /** On a request's path: PostgreSQL gives up after its read timeout (503 rather than a hung request). */
  request?: boolean;
  /**
   * PostgreSQL keeps the statement prepared on each connection under this name, so a statement
   * sent dozens of times a second is parsed and planned once a connection; one name, one text.
   */
  prepared?: string;
  /** PostgreSQL: `sql` is a `COPY … FROM STDIN` and these are its data (SqlDialect.copyRows); no params. */
  copy?: Buffer;
}

export interface QueryResult {
  rows: Row[];
  /** Rows written (for a statement with RETURNING: rows returned). */
  changes: number;
}

/**
 * The statements of one transaction, as data: each `yield` hands one statement to the
 * dialect and gets its result back. SQLite runs them synchronously inside one
 * better-sqlite3 transaction (no other statement of this process can slip in between);
 * PostgreSQL awaits each on one pooled connection. A throw rolls the transaction back.
 */
export type Steps<T> = Generator<Query, T, QueryResult>;

/** Key look-ups a dialect remembers (SQLite: while its change signal is quiet). */
export interface KeyLookupMemo {
  /**
   * The remembered look-up, or `load`'s, judged by a check for changes made after the call (the
   * store's next-request guarantee); a miss is loaded once for the look-ups that share a check.
   */
  find(hash: string, load: () => Promise<KeyLookup | null>): Promise<KeyLookup | null>;
  touched(keyId: string, at: Date): void;
  /** After this connection's own change: of one store's look-ups, when `storeId` is given, else of all. */
  invalidate(storeId?: string): void;
}

export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';

  /** Runs one statement outside any transaction. */
  query(query: Query): Promise<QueryResult>;
  /**
   * A write nobody waits for on the event loop (the delivery ledger's batches), run elsewhere
   * where the dialect can: SQLite on a thread of its own (better-sqlite3 is synchronous).
   * Absent: `query` (PostgreSQL's statements already run in the database's own process).
   * The statements run in one transaction, and the rows each changed are answered in order.
   */
  background?(queries: readonly Query[]): Promise<number[]>;
  /** Runs the statements `steps` yields in one write transaction. */
  transaction<T>(steps: Steps<T>): Promise<T>;

  /** A time column's value as a Date. */
  time(value: unknown): Date;
  /** A Date as a time column's parameter value. */
  timeParam(at: Date): unknown;
  /** A JSON column's value (text or already parsed) as its value. */
  json<T>(value: unknown): T;
  /**
   * SQL: a query of `rows` rows whose columns are of these kinds, named column1…columnN as a
   * VALUES list names them, to insert (`INSERT INTO t (…) ${rows}`) or select from
   * (`FROM (${rows}) AS v`); its parameters are `rowsParams` of the rows' values in row order
   * (the delivery ledger's runs, sql/ledger-writes.ts).
   */
  rowsQuery(kinds: readonly ColumnKind[], rows: number): string;
  rowsParams(kinds: readonly ColumnKind[], values: readonly unknown[]): unknown[];
  /**
   * Of `left` rows still to write, how many the next statement of a rowsQuery takes (`most` at
   * most), so that the texts a dialect prepares stay few whatever the number of rows.
   */
  rowsInStatement(left: number, most: number): number;
  /**
   * One statement inserting rows of these kinds (values in row order, as rowsParams takes
   * them) into `table`'s `columns`, where the dialect has a cheaper way than an INSERT of a
   * rowsQuery: PostgreSQL's binary COPY (postgres/binary-copy-rows.ts). Absent: the INSERT.
   */
  copyRows?(table: string, columns: readonly string[], kinds: readonly ColumnKind[], values: readonly unknown[]): Query;

  /** SQL: the database clock now, as a time column holds it (read under the write lock in a transaction). */
  readonly now: string;
  /** SQL: the database clock `ms` milliseconds ago. */
  ago(ms: number): string;
  /** SQL: `column` is one of the ids bound as one parameter made by `ids()`. */
  anyId(column: string): string;
  ids(ids: readonly number[]): unknown;
  /** SQL: `column` is one of the texts bound as one parameter made by `texts()`. */
  anyText(column: string): string;
  texts(values: readonly string[]): unknown;
  /** Ids for every level of every category path, creating the missing ones (inside the commit). */
  ensureCategories(storeId: string, paths: readonly string[]): Steps<number[]>;

  /** Remembered key look-ups, or null when every look-up asks the database. */
  readonly keyLookups: KeyLookupMemo | null;

  migrate(): Promise<void>;
  ping(): Promise<void>;
  /** Migrations not yet applied (readiness, doctor); throws when the database cannot be reached. */
  pendingMigrations(): Promise<number>;
  /** SQLite: the journal mode (`wal` expected). */
  journalMode?(): string;
  /**
   * Whether CSV/TSV, JSON, XML and YML pages are built by the C aggregates: SQLite's extension
   * (sqlite/records-extension.ts), PostgreSQL's module over its COPY (postgres/native-copy-records.ts).
   */
  readonly nativeRecords?: boolean;
  /** PostgreSQL: the pool's connections (metrics). */
  poolUse?(): { total: number; idle: number; waiting: number; max: number };
  /** Starts what exports read on (SQLite: its page threads) before the first export asks. */
  startThreads(): void;
  close(): Promise<void>;

  /** Publications by any process, each dialect's own mechanism (publication-feed.ts in its folder). */
  publicationFeed(): PublicationFeed;
  /**
   * Called after a commit other processes must hear of at once: a store's latest list changed,
   * a webhook event was queued. SQLite touches its events file (sqlite/events-file.ts), which
   * wakes the publication feed and the webhook sender of every instance on the host. Absent on
   * PostgreSQL, whose publications and queued events NOTIFY from their triggers.
   */
  announce?(): void;
  /**
   * Calls `listener` after each queued webhook event by any process (SQLite: after each
   * announcement); answers how to stop, or null where nothing can be watched.
   */
  watchAnnouncements?(listener: () => void, onError?: (error: unknown) => void): (() => void) | null;

  /** The item paths, each dialect's own mechanism (items.ts in its folder). */
  readonly items: DialectItems;
}

/** The [start, end) of each statement's rows when `rows` rows are written `most` at most a statement, as the dialect splits them (rowsInStatement). */
export function* statementRows(d: Pick<SqlDialect, 'rowsInStatement'>, rows: number, most: number): Generator<[number, number]> {
  for (let start = 0, end; start < rows; start = end) {
    end = start + d.rowsInStatement(rows - start, most);
    yield [start, end];
  }
}

/** Runs a write nobody waits for on the event loop: the dialect's `background`, else `query`. */
export const inBackground = async (d: Pick<SqlDialect, 'background' | 'query'>, query: Query): Promise<QueryResult> =>
  (d.background ? { rows: [], changes: (await d.background([query]))[0] } : d.query(query));

/**
 * Several such writes as one commit. Every commit is a change every SQLite connection's key
 * look-ups must check for (sqlite/key-lookup-cache.ts), and one commit per statement multiplied
 * the ledger's write cost with many stores (bench/RESULTS.md, "Commits of the ledger and the touches").
 */
export const inBackgroundTogether = async (d: Pick<SqlDialect, 'background' | 'transaction' | 'query'>, queries: readonly Query[]): Promise<void> => {
  if (queries.length === 0) return;
  if (d.background) {
    await d.background(queries);
    return;
  }
  // A lone statement commits alone: no BEGIN and COMMIT round trips around it.
  if (queries.length === 1) {
    await d.query(queries[0]);
    return;
  }
  await d.transaction((function* (): Steps<void> {
    for (const query of queries) yield query;
  })());
};

export interface DialectItems {
  /** Appends a draft's items, and rows its rowReader made; returns those whose offer_id the draft already holds (not stored). */
  append(draftId: number, items: readonly SequencedItem[], rows?: readonly ItemRows[]): Promise<DuplicateOffer[]>;
  /** The native reader of items into the draft's rows (item-rows/), where the dialect can store them; null without it. */
  rowReader?(draftId: number): ItemRowReader | null;
  /**
   * Makes every row appended to the draft so far visible to the other connections, or fails if
   * any was lost (SQLite's append thread commits several batches at a time). Before the
   * draft's rows are compared, committed or dropped.
   */
  settle?(draftId: number): Promise<void>;
  read(priceListId: number, options: ReadItemsOptions): AsyncIterable<PriceItem[]>;
  /** The kinds of record `render` builds (RecordSpec's `format`). */
  readonly recordFormats: ReadonlySet<RecordSpec['format']>;
  /** Only for a spec of recordFormats every field of which is a column (stored-fields.ts). */
  render(priceListId: number, spec: RecordSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array>;
  /**
   * The records of a version's recorded changes (price_list_changes of `changesOf`), as
   * ChangesRepository.records says; null for specs it does not build. Absent: none are built.
   */
  changeRecords?(changesOf: number, specs: ChangeRecordSpecs, onlyAvailable: boolean): ChangeRecords | null;
}
