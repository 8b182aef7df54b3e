/*
 * What the ledger, webhook and outbox repositories need from a dialect: a statement, a
 * transaction given as the statements it yields, and how time columns travel. The shape is
 * a subset of the shared SQL base's dialect (sql/dialect.ts of the #12 redesign), so the same
 * repositories run on it unchanged; until then sqlite/delivery-runner.ts and
 * postgres/delivery-runner.ts supply it.
 */

export type Row = Record<string, unknown>;

/** One statement with `?` placeholders (a dialect rewrites them if it must). */
export interface Query {
  sql: string;
  params: readonly unknown[];
}

export interface QueryResult {
  rows: Row[];
  /** Rows written (for a statement with RETURNING: rows returned). */
  changes: number;
}

/**
 * The statements of one transaction, as data: each `yield` hands one statement to the
 * dialect and gets its result back; a throw rolls the transaction back. So the outbox
 * insert can run inside another module's transaction (`yield* enqueueSteps(…)`).
 */
export type Steps<T> = Generator<Query, T, QueryResult>;

export interface DeliverySql {
  readonly name: 'sqlite' | 'postgres';
  query(query: Query): Promise<QueryResult>;
  transaction<T>(steps: Steps<T>): Promise<T>;
  /**
   * A write nobody waits for on the event loop (the ledger's batches), where the dialect can
   * run it elsewhere: SQLite on a thread of its own (better-sqlite3 is synchronous). Absent:
   * `query` (PostgreSQL's queries already run in the database's process).
   */
  background?(query: Query): Promise<QueryResult>;
  /** A time column's value as a Date. */
  time(value: unknown): Date;
  /** A Date as a time column's parameter value. */
  timeParam(at: Date): unknown;
}

/** Booleans travel as 1/0: SQLite binds no booleans, and PostgreSQL reads '1'/'0' as a boolean. */
export const bit = (value: boolean | null): number | null => (value === null ? null : value ? 1 : 0);
