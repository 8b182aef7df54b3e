/** The page threads: answers in order of asking, errors as rejections, a closed pool refuses. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { PageWorkers } from './store-threads.js';

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
    const pool = new PageWorkers(path);
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
    const pool = new PageWorkers(path);
    try {
      await assert.rejects(pool.run('SELECT nope FROM t', {}), /no such column: nope/);
      assert.equal((await pool.run("SELECT CAST('ok' AS BLOB)", {}))?.toString(), 'ok');
    } finally {
      await pool.close();
    }
  });

  it('reads with a read-only connection: a write is refused', async () => {
    const pool = new PageWorkers(path);
    try {
      await assert.rejects(pool.run("DELETE FROM t RETURNING CAST('x' AS BLOB)", {}), /readonly/);
    } finally {
      await pool.close();
    }
  });

  it('after close, queued and new queries are refused', async () => {
    const pool = new PageWorkers(path);
    const queued = Promise.allSettled(Array.from({ length: 20 }, () => pool.run('SELECT CAST(group_concat(s) AS BLOB) FROM t', {})));
    await pool.close();
    const settled = await queued;
    assert.ok(settled.some((s) => s.status === 'rejected'), 'queries still queued at close are refused');
    await assert.rejects(pool.run('SELECT 1', {}), /closed/);
  });
});
