/*
 * The SQLite publication feed looks at the WAL-index header when the `-wal` file is written,
 * not on a fast timer: with the polls an hour apart, a commit by another connection is still
 * told at once; where nothing can be watched (an in-memory database) it polls as before.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { Publication } from '../warming-types.js';
import { SqlitePublicationFeed, type FeedTiming } from './publication-feed.js';

const HOUR = 3_600_000;
/** Polls an hour apart: only the watch can tell a publication within a test's time. */
const WATCH_ONLY: FeedTiming = { checkMs: HOUR, watchedCheckMs: HOUR, settleMs: 1 };

function openWal(path: string): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE IF NOT EXISTS publication_log (seq INTEGER PRIMARY KEY, store_id TEXT NOT NULL, version INTEGER NOT NULL)');
  return db;
}

/** Resolves with the next publications the feed tells; fails after `ms` (a guard, not a wait). */
function nextTold(feed: SqlitePublicationFeed, ms = 10_000): Promise<Publication[]> {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`the feed told nothing in ${ms} ms`)), ms);
    feed.start(
      (publications) => {
        clearTimeout(guard);
        resolve(publications);
      },
      (error) => {
        clearTimeout(guard);
        reject(error);
      },
    );
  });
}

describe('SQLite publication feed: woken by the -wal file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'publication-feed-'));
  const path = join(dir, 'db.sqlite');
  const server = openWal(path);
  // Another connection, as the CLI or another instance would hold.
  const other = openWal(path);
  after(() => {
    server.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('tells a commit by another connection at once, with its polls an hour apart', async () => {
    other.prepare('INSERT INTO publication_log (store_id, version) VALUES (?, ?)').run('before', 1);
    const feed = new SqlitePublicationFeed(server, path, WATCH_ONLY);
    try {
      const told = nextTold(feed);
      assert.equal(feed.watching, true);
      other.prepare('INSERT INTO publication_log (store_id, version) VALUES (?, ?)').run('s1', 7);
      const publications = await told;
      assert.deepEqual(publications.map((p) => [p.storeId, p.version]), [['s1', 7]]);
    } finally {
      await feed.close();
    }
  });

  it('tells the next commit too, and nothing after it is closed', async () => {
    const feed = new SqlitePublicationFeed(server, path, WATCH_ONLY);
    const told = nextTold(feed);
    other.prepare('INSERT INTO publication_log (store_id, version) VALUES (?, ?)').run('s2', 3);
    assert.deepEqual((await told).map((p) => [p.storeId, p.version]), [['s2', 3]]);
    await feed.close();
    assert.equal(feed.watching, false);
  });

  it('polls where there is no file to watch (an in-memory database)', async () => {
    const memory = new Database(':memory:');
    memory.exec('CREATE TABLE publication_log (seq INTEGER PRIMARY KEY, store_id TEXT NOT NULL, version INTEGER NOT NULL)');
    const feed = new SqlitePublicationFeed(memory, ':memory:', { checkMs: 1, watchedCheckMs: HOUR, settleMs: 1 });
    try {
      const told = nextTold(feed);
      assert.equal(feed.watching, false);
      memory.prepare('INSERT INTO publication_log (store_id, version) VALUES (?, ?)').run('m', 1);
      assert.deepEqual((await told).map((p) => [p.storeId, p.version]), [['m', 1]]);
    } finally {
      await feed.close();
      memory.close();
    }
  });
});
