import type { Store } from './types.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

/** The only place that picks a dialect: `sqlite:PATH` or `postgres://…`. */
export async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) return new SqliteStore(databaseUrl.slice('sqlite:'.length));
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    const { PostgresStore } = await import('./postgres/postgres-store.js');
    return new PostgresStore(databaseUrl);
  }
  throw new Error('DATABASE_URL must be sqlite:PATH or postgres://…');
}
