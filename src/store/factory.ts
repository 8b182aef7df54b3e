import type { Database } from './types.js';
import { sqlDatabase } from './sql/sql-database.js';
import { SqliteDialect } from './sqlite/dialect.js';

export interface OpenOptions {
  /**
   * Start what exports read on now (SQLite: its page threads), so the first export does not
   * wait for them. Default true; a one-shot command that exports nothing may say false.
   */
  startThreads?: boolean;
  /**
   * Build CSV/TSV, JSON, XML and YML pages with the C aggregates when they were built (default
   * true; SQLite's extension, PostgreSQL's Node-API module); false builds them by SQL, the same
   * bytes (the tests compare the two).
   */
  nativeRecords?: boolean;
  /** PostgreSQL: connections the pool opens at most (DATABASE_POOL_SIZE); node-postgres' default, 10, when absent. */
  poolSize?: number;
}

/** The only place that picks a dialect: `sqlite:PATH` or `postgres://…`. */
export async function openDatabase(databaseUrl: string, options: OpenOptions = {}): Promise<Database> {
  const dialect = await openDialect(databaseUrl, options);
  if (options.startThreads !== false) dialect.startThreads();
  return sqlDatabase(dialect);
}

async function openDialect(databaseUrl: string, options: OpenOptions) {
  if (databaseUrl.startsWith('sqlite:')) return new SqliteDialect(databaseUrl.slice('sqlite:'.length), { nativeRecords: options.nativeRecords });
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { PostgresDialect } = await import('./postgres/dialect.js');
    return new PostgresDialect(databaseUrl, { nativeRecords: options.nativeRecords, poolSize: options.poolSize });
  }
  throw new Error('DATABASE_URL must be sqlite:PATH or postgres://…');
}
