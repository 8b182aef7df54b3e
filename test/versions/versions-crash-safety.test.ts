/**
 * Crash safety of CONTRACT §10's changes, with the real CLI as a child process on SQLite: a
 * publication that quarantines items, a quarantine release and a rollback are each SIGKILLed
 * while they write (the first change of the WAL file once their reading is done), and the
 * database then holds the old state or the new one, never a mix; the interrupted change then
 * runs to completion.
 */
import assert from 'node:assert/strict';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { killStrayChildren, runCli, sleep, spawnCli } from '../robustness/child-service.js';

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

function readState(file: string): State {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const latest = db.prepare(
      'SELECT p.id, p.version, p.item_count, COALESCE(p.items_of, p.id) AS items FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = ?',
    ).get(STORE) as { id: number; version: number; item_count: number; items: number };
    const served = db.prepare('SELECT count(*) AS n, total(price) AS sum FROM price_items WHERE price_list_id = ?').get(latest.items) as { n: number; sum: number };
    return {
      latestVersion: latest.version,
      itemCount: latest.item_count,
      servedRows: served.n,
      servedSum: served.sum,
      pending: db.prepare('SELECT count(*) FROM quarantined_items WHERE price_list_id = ?').pluck().get(latest.id) as number,
      versions: db.prepare("SELECT version FROM price_lists WHERE store_id = ? AND status = 'published' AND held = 0 AND retired_at IS NULL ORDER BY version").pluck().all(STORE) as number[],
    };
  } finally {
    db.close();
  }
}

const mtimeOf = (file: string) => { try { return statSync(file).mtimeMs; } catch { return 0; } };

describe('crash safety of versions, quarantine and rollback (SQLite)', () => {
  let dir: string;
  let dbFile: string;
  let env: Record<string, string>;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'price-export-versions-crash-'));
    dbFile = join(dir, 'db.sqlite');
    env = { DATABASE_URL: `sqlite:${dbFile}` };
    await runCli(['store', 'create', '--id', STORE, '--name', 'Crash'], env);
    await writeNdjson(join(dir, 'base.ndjson'), () => '100.00');
    await writeNdjson(join(dir, 'drops.ndjson'), (i) => (i < QUARANTINED ? '1.00' : '100.00'));
    await runCli(['publish', '--store', STORE, join(dir, 'base.ndjson')], env);
  });

  after(() => {
    killStrayChildren();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Runs the command and SIGKILLs it at the first write to the WAL once `ready()` holds (its
   * reading done); answers whether it was killed before it finished.
   */
  async function killWhileWriting(args: string[], ready: () => boolean): Promise<boolean> {
    const run = spawnCli(args, env);
    let exited = false;
    void run.exited.then(() => { exited = true; });
    const wal = `${dbFile}-wal`;
    let seen = -1;
    const deadline = Date.now() + 120_000;
    while (!exited) {
      assert.ok(Date.now() < deadline, 'the command never got going');
      if (seen < 0 && ready()) seen = mtimeOf(wal);
      if (seen >= 0 && mtimeOf(wal) !== seen) {
        run.child.kill('SIGKILL');
        break;
      }
      await sleep(1);
    }
    const exit = await run.exited;
    return exit.signal === 'SIGKILL';
  }

  const draftFull = () => {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare("SELECT count(*) FROM price_items WHERE price_list_id = (SELECT max(id) FROM price_lists WHERE status = 'draft')").pluck().get() as number) >= COUNT;
    } finally {
      db.close();
    }
  };

  const oldPublication: State = { latestVersion: 1, itemCount: COUNT, servedRows: COUNT, servedSum: COUNT * 10_000, pending: 0, versions: [1] };
  const quarantined: State = { latestVersion: 2, itemCount: COUNT, servedRows: COUNT, servedSum: COUNT * 10_000, pending: QUARANTINED, versions: [1, 2] };
  const released: State = { latestVersion: 3, itemCount: COUNT, servedRows: COUNT, servedSum: (COUNT - QUARANTINED) * 10_000 + QUARANTINED * 100, pending: 0, versions: [1, 2, 3] };
  const rolledBack: State = { latestVersion: 4, itemCount: COUNT, servedRows: COUNT, servedSum: COUNT * 10_000, pending: 0, versions: [1, 2, 3, 4] };

  async function oldOrNew(args: string[], ready: () => boolean, old: State, next: State): Promise<void> {
    const killed = await killWhileWriting(args, ready);
    const state = readState(dbFile);
    const isOld = JSON.stringify(state) === JSON.stringify(old);
    assert.ok(isOld || JSON.stringify(state) === JSON.stringify(next), `old or new state after SIGKILL (killed: ${killed}): ${JSON.stringify(state)}`);
    if (isOld) await runCli([...args, '--json'], env);
    assert.deepEqual(readState(dbFile), next);
  }

  test('a publication that quarantines items, SIGKILLed while committing', async () => {
    await oldOrNew(['publish', '--store', STORE, join(dir, 'drops.ndjson')], draftFull, oldPublication, quarantined);
  });

  test('a quarantine release, SIGKILLed while it copies the list', async () => {
    await oldOrNew(['quarantine', 'release', '--store', STORE, '--all'], () => true, quarantined, released);
  });

  test('a rollback, SIGKILLed while it writes', async () => {
    await oldOrNew(['rollback', '--store', STORE, '--to', '1'], () => true, released, rolledBack);
  });

  test('the database is sound afterwards', () => {
    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    try {
      assert.equal(db.prepare('PRAGMA integrity_check').pluck().get(), 'ok');
    } finally {
      db.close();
    }
  });
});
