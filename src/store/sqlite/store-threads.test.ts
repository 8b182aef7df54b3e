/**
 * The page threads: answers in order of asking, errors as rejections, a closed pool refuses.
 * The append thread: a batch it is inserting is not also kept on the main thread; its
 * transactions span several batches, yet a draft's rows are all there when it settles, a settle
 * that finds rows missing or lost fails, and an idle transaction does not keep the write lock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import type { PriceItem } from '../../model/price-item.js';
import type { SequencedItem } from '../types.js';
import { AppendThread, PageWorkers } from './store-threads.js';

let dir: string;
let path: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'page-workers-'));
  path = join(dir, 'pages.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec("CREATE TABLE t (n INTEGER PRIMARY KEY, s TEXT); WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM c WHERE v < 1000) INSERT INTO t SELECT v, 'row ' || v FROM c");
  db.close();
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('page threads', () => {
  it('run many queries at once, each answer its own, blobs as Buffers', async () => {
    const pool = new PageWorkers(path, null);
    try {
      pool.start();
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => pool.run("SELECT CAST(group_concat(s, ',') AS BLOB) FROM t WHERE n > @from AND n <= @from + 25", { from: i * 25 })),
      );
      answers.forEach((answer, i) => {
        assert.ok(Buffer.isBuffer(answer));
        assert.equal(answer.toString(), Array.from({ length: 25 }, (_, k) => `row ${i * 25 + k + 1}`).join(','));
      });
      assert.equal(await pool.run('SELECT NULL', {}), null);
    } finally {
      await pool.close();
    }
  });

  it('a failing query rejects with its message, and the threads go on answering', async () => {
    const pool = new PageWorkers(path, null);
    try {
      await assert.rejects(pool.run('SELECT nope FROM t', {}), /no such column: nope/);
      assert.equal((await pool.run("SELECT CAST('ok' AS BLOB)", {}))?.toString(), 'ok');
    } finally {
      await pool.close();
    }
  });

  it('reads with a read-only connection: a write is refused', async () => {
    const pool = new PageWorkers(path, null);
    try {
      await assert.rejects(pool.run("DELETE FROM t RETURNING CAST('x' AS BLOB)", {}), /readonly/);
    } finally {
      await pool.close();
    }
  });

  it('after close, queued and new queries are refused', async () => {
    const pool = new PageWorkers(path, null);
    const queued = Promise.allSettled(Array.from({ length: 20 }, () => pool.run('SELECT CAST(group_concat(s) AS BLOB) FROM t', {})));
    await pool.close();
    const settled = await queued;
    assert.ok(settled.some((s) => s.status === 'rejected'), 'queries still queued at close are refused');
    await assert.rejects(pool.run('SELECT 1', {}), /closed/);
  });
});

/** A new database file with price_items as the append thread writes them (`.name` is its path). */
function itemsDatabase(name: string): Database.Database {
  const db = new Database(join(dir, name));
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE price_items (price_list_id INTEGER, seq INTEGER, offer_id TEXT, name TEXT, price INTEGER, old_price INTEGER,
    currency TEXT, available INTEGER, quantity INTEGER, url TEXT, extra TEXT, quote_free INTEGER, PRIMARY KEY (price_list_id, seq));
    CREATE UNIQUE INDEX price_items_offer ON price_items(price_list_id, offer_id)`);
  return db;
}

/** Runs `use` with a new items database and an append thread on it, closing both after. */
async function withAppendThread(name: string, use: (db: Database.Database, thread: AppendThread) => Promise<void>): Promise<void> {
  const db = itemsDatabase(name);
  const thread = new AppendThread(db.name, null);
  try {
    await use(db, thread);
  } finally {
    await thread.close();
    db.close();
  }
}

/** An item with this offer id and name, nothing else set. */
const item = (offerId: string, name = 'Item'): PriceItem => ({
  offer_id: offerId, name, price: 100, old_price: null, purchase_price: null, currency: 'RUB', available: true, quantity: null, url: null,
  picture: null, vendor: null, vendor_code: null, barcode: null, description: null, category: null, competitors: null, attributes: null,
});

/** `count` items of one draft, seqs from `from`, offer ids `<draft>-<seq>`. */
const itemsOf = (draft: number, from: number, count: number): SequencedItem[] =>
  Array.from({ length: count }, (_, i) => ({ seq: from + i, item: item(`${draft}-${from + i}`) }));

describe('the append thread', () => {
  it("commits interleaved drafts' batches, each draft's all there once it settles", () => withAppendThread('interleaved.db', async (db, thread) => {
    for (let batch = 0; batch < 5; batch++) {
      assert.deepEqual(await thread.append(1, itemsOf(1, batch * 300, 300)), []);
      assert.deepEqual(await thread.append(2, itemsOf(2, batch * 200, 200)), []);
    }
    await thread.settle(1, 1500);
    const count = db.prepare('SELECT count(*) FROM price_items WHERE price_list_id = ?').pluck();
    assert.equal(count.get(1), 1500);
    // Draft 2's rows were committed with draft 1's: its settle finds them all too.
    assert.deepEqual(await thread.append(2, itemsOf(2, 1000, 10)), []);
    await thread.settle(2, 1010);
    assert.equal(count.get(2), 1010);
  }));

  it('a settle that finds fewer rows than were sent fails (a thread restarted in between)', () => withAppendThread('restarted.db', async (_db, thread) => {
    await thread.append(3, itemsOf(3, 0, 10));
    await assert.rejects(thread.settle(3, 25), /holds 10 of the 25 rows sent for publication draft 3/);
  }));

  it('a batch that fails takes the open transaction with it, and every draft in it is told at its settle', () => withAppendThread('failed.db', async (db, thread) => {
    assert.deepEqual(await thread.append(4, itemsOf(4, 0, 100)), []);
    // An item whose price SQLite cannot bind: the statement fails after draft 5's first item went in.
    const unbindable = { ...item('5-1'), price: {} as unknown as number };
    await assert.rejects(thread.append(5, [...itemsOf(5, 0, 1), { seq: 1, item: unbindable }]), /can only bind/);
    await assert.rejects(thread.settle(4, 100), /rows of publication draft 4 were lost/);
    assert.equal(db.prepare('SELECT count(*) FROM price_items').pluck().get(), 0, 'nothing of the failed transaction is stored');
    // The thread goes on: a new draft's rows are stored.
    await thread.append(6, itemsOf(6, 0, 5));
    await thread.settle(6, 5);
    assert.equal(db.prepare('SELECT count(*) FROM price_items').pluck().get(), 5);
  }));

  it('a draft that stops sending does not keep the write lock: its open transaction commits on its own', () => withAppendThread('stalled.db', async (db, thread) => {
    db.pragma('busy_timeout = 20000');
    await thread.append(7, itemsOf(7, 0, 10));
    // No settle: this writer gets the lock once the thread's transaction commits by itself.
    db.exec('BEGIN IMMEDIATE');
    assert.equal(db.prepare('SELECT count(*) FROM price_items').pluck().get(), 10);
    db.exec('COMMIT');
  }));

  it('keeps no reference to a batch once sent: the items are freed while the thread inserts them', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const setup = itemsDatabase('append.db');
    const thread = new AppendThread(setup.name, null);
    try {
      // Started (and its connection opened) before the lock is taken.
      assert.deepEqual(await thread.append(1, [{ seq: 0, item: item('A') }]), []);
      // The thread waits for this write lock (busy_timeout), so its answer cannot come before the check.
      setup.exec('BEGIN IMMEDIATE');
      const send = () => {
        const items = [{ seq: 1, item: item('B') }, { seq: 2, item: item('A', 'A again') }];
        return { sent: new WeakRef(items), answer: thread.append(1, items) };
      };
      const { sent, answer } = send();
      // A WeakRef's target is kept until the current job ends.
      await new Promise((resolve) => setImmediate(resolve));
      gc();
      assert.equal(sent.deref(), undefined, 'the items sent to the thread are still referenced on the main thread');
      setup.exec('COMMIT');
      assert.deepEqual(await answer, [{ seq: 2, offer_id: 'A' }]);
      await thread.settle(1, 3);
      assert.equal(setup.prepare('SELECT count(*) FROM price_items').pluck().get(), 2);
    } finally {
      // Terminating a thread while it waits for the lock aborts the process: let it finish first.
      if (setup.inTransaction) setup.exec('COMMIT');
      await thread.close();
      setup.close();
    }
  });
});
