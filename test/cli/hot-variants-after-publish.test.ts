import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { until } from '../support/until.js';
import type { FastifyInstance } from 'fastify';
import { buildPublicApp } from '../../src/composition.js';
import { loadConfig } from '../../src/config/config.js';
import { putProfile } from '../../src/domain/profiles.js';
import { HOT_FOR_MS } from '../../src/domain/variant-demand.js';
import { warmingOf } from '../../src/http/app.js';
import { renderCacheOf } from '../../src/http/export-cache.js';
import { runCli } from '../multi-instance/processes.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { findKeyLeaks, get, publishJson, storeWithKey } from '../support/test-app.js';

/*
 * Issue #16, part 3: after a publication by another process, every variant asked for in the last
 * 7 days is rendered before anyone asks, and a fetcher's first request is a cache hit with
 * Content-Length. Nothing here sleeps for the warmer: the tests wait for the "hot variants
 * warmed" log line (an event) and poll the cache's state in bounded loops.
 */

const items = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => ({
    offer_id: `${tag}-${i}`,
    name: `Item ${i} ${tag}`,
    price: (100 + i / 100).toFixed(2),
    quantity: i % 3,
    category: `Group ${i % 4}`,
    url: `https://shop.example/p/${i}`,
  }));


for (const dialect of DIALECTS) {
  describe(`hot variants are rendered after each publication (${dialect})`, () => {
    let db: TestDatabase;
    let app: FastifyInstance;
    let tmp: string;
    const logLines: string[] = [];
    /** The demand clock: tests move it by days. */
    let clock = Date.now();

    before(async () => {
      db = await createTestDatabase(dialect);
      tmp = mkdtempSync(join(tmpdir(), 'price-export-hot-'));
      const logStream = new Writable({ write(chunk, _encoding, done) { logLines.push(chunk.toString()); done(); } });
      const config = loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'info', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000' });
      app = await buildPublicApp({ config, db: db.db, logStream, now: () => clock });
      await app.ready();
    });
    after(async () => {
      await app?.close();
      await db?.drop();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
      assert.deepEqual(findKeyLeaks(), []);
    });

    const address = (key: string, query: string) => `/api/export/latest?key=${key}${query ? `&${query}` : ''}`;
    /** Resolves on the warmer's log line for this store's version. */
    const warmedLine = (storeId: string, version: number) =>
      until(`"hot variants warmed" for ${storeId} v${version}`, () =>
        logLines.some((line) => line.includes('hot variants warmed') && line.includes(`"storeId":"${storeId}"`) && line.includes(`"version":${version}`)),
      );
    const cliPublish = (storeId: string, list: unknown[]) => {
      const file = join(tmp, `${storeId}-${Math.random().toString(36).slice(2)}.ndjson`);
      writeFileSync(file, list.map((item) => JSON.stringify(item)).join('\n') + '\n');
      // --force: each list here replaces the whole catalogue on purpose; the guard (§10) would hold it.
      return runCli(['publish', '--store', storeId, file, '--force'], { DATABASE_URL: db.url });
    };

    test('a publication by the command line (another process) is rendered in every variant and coding asked for, before anyone asks', async () => {
      const key = await storeWithKey(db.db, 'hot-shop');
      await publishJson(db.db, 'hot-shop', items(300, 'old'));
      const profile = await putProfile(db.db, 'hot-shop', { name: 'Short', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'price', title: 'Price' }] });
      const variants: Array<{ query: string; coding: string }> = [
        { query: '', coding: 'identity' },
        { query: 'format=yml', coding: 'gzip' },
        { query: 'format=xlsx&only_available=true', coding: 'identity' },
        { query: `format=csv&profile_id=${profile.id}`, coding: 'br' },
        { query: 'format=google', coding: 'gzip' },
      ];
      const headers = (coding: string): Record<string, string> => (coding === 'identity' ? {} : { 'accept-encoding': coding });
      for (const { query, coding } of variants) assert.equal((await get(app, address(key, query), headers(coding))).statusCode, 200);
      await warmingOf(app).demand.flush();

      const { stdout } = await cliPublish('hot-shop', items(300, 'new'));
      assert.match(stdout, /^version 2: published/);
      await warmedLine('hot-shop', 2);
      // The compressed copies are made from the rendered files, in the background: a HEAD (which never renders) shows them.
      for (const { query, coding } of variants) {
        await until(`${query || 'legacy csv'} (${coding}) in the cache`, async () => (await get(app, address(key, query), headers(coding), 'HEAD')).headers['content-length'] !== undefined);
      }
      const cache = renderCacheOf(app);
      const rendersBefore = cache.stats().renders;
      for (const { query, coding } of variants) {
        const response = await get(app, address(key, query), headers(coding));
        assert.equal(response.statusCode, 200);
        assert.equal(response.headers['content-length'], String(response.rawPayload.length), `${query || 'legacy csv'}: a cache hit, with its length`);
        assert.equal(response.headers['content-encoding'], coding === 'identity' ? undefined : coding);
        assert.match(response.headers['content-disposition'] as string, /hot-shop-/);
      }
      assert.equal(cache.stats().renders, rendersBefore, 'the first requests after the publication rendered nothing');
      const csv = await get(app, address(key, ''));
      assert.match(csv.body, /^new-0,/m);
      assert.doesNotMatch(csv.body, /old-0/);
    });

    test('a variant not asked for in the last 7 days is not rendered; one asked for since is', async () => {
      const key = await storeWithKey(db.db, 'cold-shop');
      await publishJson(db.db, 'cold-shop', items(200, 'v1'));
      clock = Date.now() - HOT_FOR_MS - 24 * 60 * 60_000;
      await get(app, address(key, 'format=tsv'));
      await warmingOf(app).demand.flush();
      clock = Date.now();
      await get(app, address(key, 'format=xml'));
      await get(app, address(key, 'format=json'));
      await warmingOf(app).demand.flush();

      // A whole new list on purpose: --force, or the guard (§10) would hold it.
      const list = await publishJson(db.db, 'cold-shop', items(200, 'v2'), 'json', { force: true });
      await warmedLine('cold-shop', list.version);
      const line = logLines.find((l) => l.includes('hot variants warmed') && l.includes('"storeId":"cold-shop"') && l.includes(`"version":${list.version}`))!;
      assert.equal(JSON.parse(line).variants, 2, 'xml and json; not the tsv asked for 8 days ago');
      for (const query of ['format=xml', 'format=json']) {
        assert.ok((await get(app, address(key, query), {}, 'HEAD')).headers['content-length'], `${query} is cached`);
      }
      assert.equal((await get(app, address(key, 'format=tsv'), {}, 'HEAD')).headers['content-length'], undefined, 'the cold tsv is not rendered');
    });

    test('a publication that nobody’s variants follow renders nothing, and the demand rows expire after 7 days', async () => {
      await storeWithKey(db.db, 'quiet-shop');
      const before = renderCacheOf(app).stats().renders;
      await publishJson(db.db, 'quiet-shop', items(50, 'q'));
      await until('the warmer to hear of it', () => logLines.some((l) => l.includes('hot variants warmed') && l.includes('"storeId":"quiet-shop"')));
      assert.equal(renderCacheOf(app).stats().renders, before);
      assert.deepEqual(await db.db.demand.hot('quiet-shop', new Date(0)), []);
      const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
      const row = { storeId: 'quiet-shop', endpoint: 'prices', profileId: null, onlyAvailable: false, coding: 'identity' } as const;
      await db.db.demand.record([{ ...row, format: 'csv', lastAskedAt: at(30) }, { ...row, format: 'yml', lastAskedAt: at(5) }]);
      // An older ask never moves a row back.
      await db.db.demand.record([{ ...row, format: 'json', lastAskedAt: at(10) }, { ...row, format: 'yml', lastAskedAt: at(60) }]);
      assert.deepEqual((await db.db.demand.hot('quiet-shop', at(20))).map((d) => d.format), ['yml', 'json'], 'newest demand first, within the window');
      const expired = await db.db.demand.expire(new Date(Date.now() + HOT_FOR_MS + 60_000));
      assert.ok(expired >= 3, `the rows of the other tests expire (${expired})`);
      assert.deepEqual(await db.db.demand.hot('hot-shop', new Date(0)), []);
    });
  });
}
