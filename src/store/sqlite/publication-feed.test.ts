/*
 * The SQLite publication feed is woken by the database's events file, which a publication
 * touches once after its commit (events-file.ts), not by a fast poll: with its checks an hour
 * apart, a publication by another connection (as the CLI's or another instance's) is still
 * told at once, and a publication of many pages wakes it a few times, not once a page (a watch
 * of the `-wal` file was told ~160,000 times in a 300,000-item publication: bench/RESULTS.md).
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { readSource } from '../../domain/publication-source.js';
import { publishPriceList } from '../../domain/publishing.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/dialects.js';
import { openDatabase } from '../factory.js';
import type { Database } from '../types.js';
import type { Publication } from '../warming-types.js';
import { EventsFile } from './events-file.js';
import { SqlitePublicationFeed, type FeedTiming } from './publication-feed.js';
import BetterSqlite from 'better-sqlite3';

const HOUR = 3_600_000;
/** Checks an hour apart: only an announcement can tell a publication within a test's time. */
const WATCH_ONLY: FeedTiming = { watchedCheckMs: HOUR, checkMs: HOUR };

const publish = (store: Database, storeId: string, count = 1) => {
  const items = Array.from({ length: count }, (_, i) => ({ offer_id: `o${i}`, name: `Item ${i} with a name long enough to fill pages`, price: `${i}.00` }));
  return publishPriceList(store, storeId, readSource(Readable.from([Buffer.from(JSON.stringify(items))]), 'json'));
};

/** Starts `feed`, gathering what it tells; `until(n)` resolves once it told `n`, or fails after `ms` (a guard, not a wait). */
function started(feed: SqlitePublicationFeed) {
  const told: Publication[] = [];
  let wake: (() => void) | null = null;
  let failed: unknown = null;
  feed.start(
    (publications) => {
      told.push(...publications);
      wake?.();
    },
    (error) => {
      failed = error;
      wake?.();
    },
  );
  return {
    told: () => told.map((p) => [p.storeId, p.version]),
    async until(count: number, ms = 10_000): Promise<void> {
      const guard = Date.now() + ms;
      while (told.length < count && failed === null) {
        if (Date.now() > guard) assert.fail(`the feed told ${told.length} publications in ${ms} ms, not ${count}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, guard - Date.now());
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      if (failed !== null) throw failed;
    },
  };
}

describe('SQLite publication feed: woken by the events file', () => {
  let db: TestDatabase;
  let other: Database;
  let path: string;
  let server: BetterSqlite.Database;

  before(async () => {
    db = await createTestDatabase('sqlite');
    path = db.url.slice('sqlite:'.length);
    // Another connection, as the CLI or another instance would hold.
    other = await openDatabase(db.url, { startThreads: false });
    for (const id of ['s1', 's2', 's3']) await db.db.stores.create({ id, name: id, currency: 'RUB', url: null, company: null });
    server = new BetterSqlite(path);
  });
  after(async () => {
    server?.close();
    await other?.close();
    await db?.drop();
  });

  /** A feed on the server's own connection, started, and closed after `body`. */
  async function withFeed(events: EventsFile, timing: FeedTiming, body: (feed: SqlitePublicationFeed, seen: ReturnType<typeof started>) => Promise<void>) {
    const feed = new SqlitePublicationFeed(server, path, events, timing);
    try {
      await body(feed, started(feed));
    } finally {
      await feed.close();
    }
  }
  const eventsFile = () => new EventsFile(`${path}-events`);

  it('tells a publication by another connection at once, with its checks an hour apart', () =>
    withFeed(eventsFile(), WATCH_ONLY, async (feed, seen) => {
      assert.equal(feed.watching, true);
      assert.ok(existsSync(`${path}-events`), 'the events file beside the database');
      await publish(other, 's1');
      await seen.until(1);
      await publish(other, 's1');
      await seen.until(2);
      assert.deepEqual(seen.told(), [['s1', 1], ['s1', 2]]);
    }));

  it('is told a few times by a publication of many pages, not once a page', async () => {
    let woken = 0;
    const stop = eventsFile().subscribe(() => woken++);
    try {
      await withFeed(eventsFile(), WATCH_ONLY, async (_feed, seen) => {
        // ~3 MB of rows: hundreds of WAL pages, each an event for a watch of the database's folder.
        await publish(other, 's2', 30_000);
        await seen.until(1);
        assert.deepEqual(seen.told(), [['s2', 1]]);
        assert.ok(woken >= 1 && woken <= 3, `woken ${woken} times by one publication`);
      });
    } finally {
      stop?.();
    }
  });

  it('watches anew when the events file is removed, and still tells each publication', () =>
    withFeed(eventsFile(), WATCH_ONLY, async (_feed, seen) => {
      rmSync(`${path}-events`);
      await publish(other, 's3');
      await seen.until(1);
      await publish(other, 's3');
      await seen.until(2);
      assert.deepEqual(seen.told(), [['s3', 1], ['s3', 2]]);
    }));

  it('polls where nothing can be watched', () =>
    withFeed(new EventsFile('/proc/no-such-folder/db-events'), { watchedCheckMs: HOUR, checkMs: 5 }, async (feed, seen) => {
      assert.equal(feed.watching, false);
      await publish(other, 's1');
      await seen.until(1);
      assert.deepEqual(seen.told(), [['s1', 3]]);
    }));

  it('an in-memory database tells its own publications through the same announcement, in the process', async () => {
    const memory = await openDatabase('sqlite::memory:', { startThreads: false });
    try {
      await memory.migrate();
      await memory.stores.create({ id: 'm', name: 'm', currency: 'RUB', url: null, company: null });
      const feed = memory.publicationFeed() as SqlitePublicationFeed;
      const seen = started(feed);
      assert.equal(feed.watching, true);
      await publish(memory, 'm');
      await seen.until(1);
      assert.deepEqual(seen.told(), [['m', 1]]);
      await feed.close();
    } finally {
      await memory.close();
    }
  });
});
