/*
 * The publication feed of both dialects (warming-types.ts): a publication committed by another
 * connection is told once, what was published before the feed started is not, and on PostgreSQL
 * a lost listening connection is taken up again and what committed meanwhile is still told.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { readSource } from '../domain/publication-source.js';
import { publishPriceList } from '../domain/publishing.js';
import { createTestDatabase, DIALECTS, terminateBackends, type TestDatabase } from '../../test/support/dialects.js';
import { openDatabase } from './factory.js';
import type { Database } from './types.js';
import type { Publication, PublicationFeed } from './warming-types.js';
import { FEED_APPLICATION_NAME } from './postgres/publication-feed.js';

const publish = (store: Database, storeId: string) =>
  publishPriceList(store, storeId, readSource(Readable.from([Buffer.from('[{"offer_id":"A","name":"A","price":"1.00"}]')]), 'json'));

/** Collects what a feed tells; `next` resolves on the next publications, or fails after `ms`. */
function collector() {
  const told: Publication[] = [];
  let wake: (() => void) | null = null;
  return {
    told,
    onPublished: (publications: Publication[]) => {
      told.push(...publications);
      wake?.();
    },
    async until(count: number, ms = 20_000): Promise<void> {
      const deadline = Date.now() + ms;
      while (told.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) assert.fail(`the feed told ${told.length} publications, not ${count}`);
        // A timer that holds the event loop: the SQLite feed's own check timer does not (unref'd, as in the server).
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
  };
}

for (const dialect of DIALECTS) {
  describe(`publication feed (${dialect})`, () => {
    let db: TestDatabase;
    let other: Database;
    let feed: PublicationFeed | null = null;

    before(async () => {
      db = await createTestDatabase(dialect);
      // Another connection (on SQLite: as the CLI would be, so only the WAL-index header tells).
      other = await openDatabase(db.url, { startThreads: false });
      for (const id of ['s1', 's2', 's3']) await db.db.stores.create({ id, name: id, currency: 'RUB', url: null, company: null });
    });
    after(async () => {
      await feed?.close();
      await other?.close();
      await db?.drop();
    });

    it('tells each publication committed after start once, with its store and version, and nothing published before', async () => {
      await publish(other, 's1');
      const started = db.db.publicationFeed();
      feed = started;
      const seen = collector();
      started.start(seen.onPublished);
      await (started as { ready?: () => Promise<void> }).ready?.();
      await publish(other, 's2');
      await seen.until(1);
      await publish(other, 's1');
      await seen.until(2);
      assert.deepEqual(seen.told.map((p) => [p.storeId, p.version]), [['s2', 1], ['s1', 2]]);
      assert.ok(seen.told[1].seq > seen.told[0].seq);
    });

    if (dialect === 'postgres') {
      it('listens again after its connection is lost, and tells what committed meanwhile', async () => {
        await feed?.close();
        const seen = collector();
        const started = db.db.publicationFeed();
        feed = started;
        started.start(seen.onPublished, () => {});
        await (started as { ready?: () => Promise<void> }).ready?.();
        assert.equal(await terminateBackends(db.url, FEED_APPLICATION_NAME), 1, 'one listening connection per feed');
        // Published while nobody listens: the reconnect (after 1 s) reads it from the log.
        await publish(other, 's3');
        await seen.until(1);
        assert.deepEqual(seen.told.map((p) => [p.storeId, p.version]), [['s3', 1]]);
        await publish(other, 's3');
        await seen.until(2);
        assert.deepEqual(seen.told.map((p) => [p.storeId, p.version]), [['s3', 1], ['s3', 2]]);
      });
    }
  });
}
