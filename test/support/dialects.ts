import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openDatabase, type OpenOptions } from '../../src/store/factory.js';
import type { Database } from '../../src/store/types.js';

/** A fresh, migrated database of one dialect for one test file, and how to drop it. */
export interface TestDatabase {
  dialect: 'sqlite' | 'postgres';
  url: string;
  db: Database;
  drop(): Promise<void>;
}

export type Dialect = TestDatabase['dialect'];

/** Every dialect this run can reach: SQLite always, PostgreSQL when `npm test` found one. */
export const DIALECTS: readonly Dialect[] = process.env.PRICE_EXPORT_TEST_PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export async function createTestDatabase(dialect: Dialect, options: OpenOptions = {}): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'price-export-test-'));
    const url = `sqlite:${join(dir, 'test.db')}`;
    const db = await openDatabase(url, options);
    await db.migrate();
    return { dialect, url, db, drop: async () => { await db.close(); rmSync(dir, { recursive: true, force: true }); } };
  }
  const admin = process.env.PRICE_EXPORT_TEST_PG_URL;
  if (!admin) throw new Error('no PostgreSQL for tests');
  const { default: pg } = await import('pg');
  const name = `pe_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const db = await openDatabase(url.toString(), options);
  await db.migrate();
  return {
    dialect,
    url: url.toString(),
    db,
    drop: async () => {
      await db.close();
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Runs one statement on a connection of its own (as another process, or an older version, would). */
export async function executeRaw(testDb: TestDatabase, sql: string, params: unknown[] = []): Promise<void> {
  if (testDb.dialect === 'sqlite') {
    const { default: Sqlite } = await import('better-sqlite3');
    const raw = new Sqlite(testDb.url.slice('sqlite:'.length));
    try {
      raw.prepare(sql.replace(/\$\d+/g, '?')).run(...params);
    } finally {
      raw.close();
    }
    return;
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/**
 * PostgreSQL: ends the backends of `url`'s database that show `applicationName` (a restart or a
 * cut network, as a listening connection sees it); answers how many it ended.
 */
export async function terminateBackends(url: string, applicationName: string): Promise<number> {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const killed = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1', [applicationName]);
    return killed.rowCount ?? 0;
  } finally {
    await admin.end();
  }
}
