/**
 * Crash safety of CONTRACT §10's changes, with the real CLI as a child process: a publication
 * that quarantines items, a quarantine release and a rollback are each SIGKILLed while they
 * write (SQLite: the first change of the WAL file once their reading is done; PostgreSQL: while
 * the server runs their statement), and the database then holds the old state or the new one,
 * never a mix; the interrupted change then runs to completion.
 */
import assert from 'node:assert/strict';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { killStrayChildren, runCli, sleep, spawnCli } from './child-service.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';

const COUNT = 120_000;
const QUARANTINED = 40_000;
const STORE = 'crash-versions';

async function writeNdjson(file: string, price: (i: number) => string): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < COUNT; i++) {
    if (!out.write(`${JSON.stringify({ offer_id: `S-${i}`, name: `Item ${i}`, price: price(i) })}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

interface State {
  latestVersion: number;
  itemCount: number;
  servedRows: number;
  /** Sum of the served prices, minor units. */
  servedSum: number;
  pending: number;
  /** Versions published and kept. */
  versions: number[];
}

const LATEST_SQL = 'SELECT p.id, p.version, p.item_count, COALESCE(p.items_of, p.id) AS items FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = $1';
const SERVED_SQL = 'SELECT count(*) AS n, COALESCE(sum(price), 0) AS sum FROM price_items WHERE price_list_id = $1';
const PENDING_SQL = 'SELECT count(*) AS n FROM quarantined_items WHERE price_list_id = $1';
const VERSIONS_SQL = "SELECT version FROM price_lists WHERE store_id = $1 AND status = 'published' AND held = 0 AND retired_at IS NULL ORDER BY version";

/** The same SQL on both dialects (`$1` becomes `?` on SQLite). */
async function readState(run: (sql: string, ...params: unknown[]) => Promise<Record<string, unknown>[]>): Promise<State> {
  const [latest] = await run(LATEST_SQL, STORE);
  const [served] = await run(SERVED_SQL, latest.items);
  const [pending] = await run(PENDING_SQL, latest.id);
  return {
    latestVersion: Number(latest.version),
    itemCount: Number(latest.item_count),
    servedRows: Number(served.n),
    servedSum: Number(served.sum),
    pending: Number(pending.n),
    versions: (await run(VERSIONS_SQL, STORE)).map((r) => Number(r.version)),
  };
}

const mtimeOf = (file: string) => { try { return statSync(file).mtimeMs; } catch { return 0; } };

for (const dialect of DIALECTS) {
  describe(`crash safety of versions, quarantine and rollback (${dialect})`, () => {
    let dir: string;
    let db: TestDatabase;
    let dbFile = '';
    let client: pg.Client | null = null;
    let env: Record<string, string>;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'price-export-versions-crash-'));
      db = await createTestDatabase(dialect);
      // The CLI alone writes; the test's own connections only read.
      if (dialect === 'sqlite') dbFile = db.url.slice('sqlite:'.length);
      else {
        client = new pg.Client({ connectionString: db.url });
        await client.connect();
      }
      env = { DATABASE_URL: db.url };
      await runCli(['store', 'create', '--id', STORE, '--name', 'Crash'], env);
      await writeNdjson(join(dir, 'base.ndjson'), () => '100.00');
      await writeNdjson(join(dir, 'drops.ndjson'), (i) => (i < QUARANTINED ? '1.00' : '100.00'));
      await runCli(['publish', '--store', STORE, join(dir, 'base.ndjson')], env);
    });

    after(async () => {
      killStrayChildren();
      await client?.end();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    const sql = async (text: string, ...params: unknown[]): Promise<Record<string, unknown>[]> => {
      if (client) return (await client.query(text, params)).rows;
      const conn = new Database(dbFile, { readonly: true, fileMustExist: true });
      try {
        return conn.prepare(text.replace(/\$1/g, '?')).all(...params) as Record<string, unknown>[];
      } finally {
        conn.close();
      }
    };
    const state = () => readState(sql);

    /** PostgreSQL: the server is running a statement of the command that starts with `prefix`. */
    const running = (prefix: string) => async () => {
      const { rows } = await client!.query(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()",
        [`${prefix}%`],
      );
      return Number(rows[0].n) > 0;
    };

    /**
     * Runs the command and SIGKILLs it while it writes: SQLite, at the first write to the WAL
     * once `ready()` holds (its reading done); PostgreSQL, once `ready()` sees its statement
     * running. Answers whether it was killed before it finished.
     */
    async function killWhileWriting(args: string[], ready: () => Promise<boolean>): Promise<boolean> {
      const run = spawnCli(args, env);
      let exited = false;
      void run.exited.then(() => { exited = true; });
      const wal = `${dbFile}-wal`;
      let seen = -1;
      const deadline = Date.now() + 120_000;
      while (!exited) {
        assert.ok(Date.now() < deadline, 'the command never got going');
        if (seen < 0 && (await ready())) {
          seen = mtimeOf(wal);
          if (client) {
            run.child.kill('SIGKILL');
            break;
          }
        }
        if (seen >= 0 && mtimeOf(wal) !== seen) {
          run.child.kill('SIGKILL');
          break;
        }
        await sleep(1);
      }
      const exit = await run.exited;
      return exit.signal === 'SIGKILL';
    }

    const draftFull = async () => (await sql(
      "SELECT count(*) AS n FROM price_items WHERE price_list_id = (SELECT max(id) FROM price_lists WHERE status = 'draft')",
    ))[0].n as number >= COUNT;
    const always = async () => true;

    const oldPublication: State = { latestVersion: 1, itemCount: COUNT, servedRows: COUNT, servedSum: COUNT * 10_000, pending: 0, versions: [1] };
    const quarantined: State = { latestVersion: 2, itemCount: COUNT, servedRows: COUNT, servedSum: COUNT * 10_000, pending: QUARANTINED, versions: [1, 2] };
    const released: State = { latestVersion: 3, itemCount: COUNT, servedRows: COUNT, servedSum: (COUNT - QUARANTINED) * 10_000 + QUARANTINED * 100, pending: 0, versions: [1, 2, 3] };
    const rolledBack: State = { latestVersion: 4, itemCount: COUNT, servedRows: COUNT, servedSum: COUNT * 10_000, pending: 0, versions: [1, 2, 3, 4] };

    async function oldOrNew(args: string[], ready: () => Promise<boolean>, old: State, next: State): Promise<void> {
      const killed = await killWhileWriting(args, ready);
      const now = await state();
      const isOld = JSON.stringify(now) === JSON.stringify(old);
      assert.ok(isOld || JSON.stringify(now) === JSON.stringify(next), `old or new state after SIGKILL (killed: ${killed}): ${JSON.stringify(now)}`);
      if (isOld) await runCli([...args, '--json'], env);
      assert.deepEqual(await state(), next);
    }

    test('a publication that quarantines items, SIGKILLed while committing', async () => {
      await oldOrNew(['publish', '--store', STORE, join(dir, 'drops.ndjson')], client ? running('INSERT INTO quarantined_items') : draftFull, oldPublication, quarantined);
    });

    test('a quarantine release, SIGKILLed while it copies the list', async () => {
      await oldOrNew(['quarantine', 'release', '--store', STORE, '--all'], client ? running('INSERT INTO price_items') : always, quarantined, released);
    });

    test('a rollback, SIGKILLed while it writes', async () => {
      await oldOrNew(['rollback', '--store', STORE, '--to', '1'], client ? running('INSERT INTO price_lists') : always, released, rolledBack);
    });

    test('the database is sound afterwards', async () => {
      if (dialect !== 'sqlite') return;
      const conn = new Database(dbFile, { readonly: true, fileMustExist: true });
      try {
        assert.equal(conn.prepare('PRAGMA integrity_check').pluck().get(), 'ok');
      } finally {
        conn.close();
      }
    });
  });
}
