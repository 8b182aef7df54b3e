/*
 * Issue #16, part 3: "after a publication of a store with 6 hot variants of 100k items, all 6 are
 * in the cache within 5 s, and a fetcher's first request after that is a cache hit with
 * Content-Length." A real server process (SQLite, or PostgreSQL with --database-url); the bench
 * process publishes as the CLI would, from outside, so the server hears of it through its
 * publication feed (SQLite's change signal, PostgreSQL's NOTIFY), not a poll.
 *
 *   node --import tsx bench/figures/warm-hot-variants.ts [--items 100000] [--rounds 5] [--quick] [--database-url postgres://…]
 *
 * Each round publishes anew and times until all 6 are cached; the figure is the median of the
 * rounds with min–max (a BENCH-RESULT line, bench/lib/bench-result.ts); on SQLite, or on the
 * PostgreSQL database --database-url names (an empty one of its own: the bench migrates it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { emitResult, metInEveryRound } from '../lib/bench-result.js';
import { putProfile } from '../../src/domain/profiles.js';
import { openDatabase } from '../../src/store/factory.js';
import { benchStore, republish } from '../bench-data.js';
import { download } from '../http-client.js';
import { startServer } from '../server-process.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const { values: args } = parseArgs({ options: { items: { type: 'string' }, rounds: { type: 'string', default: '5' }, quick: { type: 'boolean', default: false }, 'database-url': { type: 'string' } } });
const ITEMS = Number(args.items ?? (args.quick ? 20_000 : 100_000));
const ROUNDS = Math.max(5, Number(args.rounds));
const GOAL_SECONDS = 5;
const dir = mkdtempSync(join(tmpdir(), 'price-export-warm-bench-'));
const databaseUrl = args['database-url'] ?? `sqlite:${join(dir, 'bench.db')}`;
const STORE = `warm-bench-${Date.now().toString(36)}`;

const log = (line: string) => console.log(line);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

try {
  const store = await openDatabase(databaseUrl, { startThreads: false });
  await store.migrate();
  const key = await benchStore(store, STORE, ITEMS);
  const profile = await putProfile(store, STORE, { name: 'Short', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'name', title: 'Name' }, { field: 'price', title: 'Price' }] });
  /** Six variants a store's fetchers use: the 1C importer's CSV, two marketplace feeds (gzip), a spreadsheet, a site's JSON, a profile CSV (br). */
  const variants = [
    { query: '', coding: 'identity' },
    { query: 'format=yml', coding: 'gzip' },
    { query: 'format=google', coding: 'gzip' },
    { query: 'format=xlsx', coding: 'identity' },
    { query: 'format=json&only_available=true', coding: 'identity' },
    { query: `format=csv&profile_id=${profile.id}`, coding: 'br' },
  ];
  const headers = (coding: string): Record<string, string> => (coding === 'identity' ? {} : { 'accept-encoding': coding });
  const server = await startServer({ command: ['--import', 'tsx', join(ROOT, 'src/cli/index.ts')], databaseUrl, cwd: ROOT, env: { CACHE_DIR: join(dir, 'cache') } });
  try {
    const url = (query: string) => `${server.base}/api/export/latest?key=${key}${query ? `&${query}` : ''}`;
    // The fetchers come once: the variants are now hot (written to the database within a second).
    for (const { query, coding } of variants) {
      const answer = await download(url(query), headers(coding));
      if (answer.status !== 200) throw new Error(`${query}: ${answer.status}`);
    }
    for (let tries = 0; (await store.demand.hot(STORE, new Date(0))).length < variants.length; tries++) {
      if (tries > 100) throw new Error('the server did not record the demand');
      await sleep(100);
    }

    const rounds: number[] = [];
    let allHits = true;
    for (let round = 0; round < ROUNDS; round++) {
    log(`round ${round + 1}: publishing ${ITEMS.toLocaleString('en')} items from this process (as the CLI would) …`);
    await republish(store, STORE, ITEMS);
    const committed = performance.now();
    const ready = new Map<string, number>();
    while (ready.size < variants.length) {
      for (const { query, coding } of variants) {
        const id = `${query || 'legacy csv'} (${coding})`;
        if (ready.has(id)) continue;
        // HEAD never renders: a Content-Length means this instance has the file (and the copy) cached.
        const head = await download(url(query), headers(coding), { method: 'HEAD' });
        if (head.headers['content-length'] !== undefined) ready.set(id, (performance.now() - committed) / 1000);
      }
      if ((performance.now() - committed) / 1000 > 120) throw new Error(`only ${ready.size} of ${variants.length} cached after 120 s`);
      if (ready.size < variants.length) await sleep(20);
    }
    const all = Math.max(...ready.values());
    for (const [id, seconds] of ready) log(`  ${id.padEnd(44)} cached ${seconds.toFixed(2)} s after the commit`);
    let hits = 0;
    let firstSeconds = 0;
    for (const { query, coding } of variants) {
      const first = await download(url(query), headers(coding));
      if (first.status === 200 && first.headers['content-length'] === String(first.bytes)) hits++;
      firstSeconds = Math.max(firstSeconds, first.seconds);
    }
    log(`round ${round + 1}: all ${variants.length} hot variants cached ${all.toFixed(2)} s after the commit; `
      + `first requests: ${hits}/${variants.length} cache hits with Content-Length, slowest ${(firstSeconds * 1000).toFixed(0)} ms`);
    rounds.push(all);
    allHits &&= hits === variants.length;
    }
    const dialect = databaseUrl.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
    emitResult({
      figure: `all 6 hot variants of ${ITEMS.toLocaleString('en-US')} items in the render cache after a publication, ${dialect}, seconds (then every first request a cache hit with Content-Length: ${allHits ? 'yes' : 'NO'})`,
      unit: 's',
      higherIsBetter: false,
      ours: rounds,
      reference: [],
      referenceName: 'none: the goal is an absolute time',
      goal: `≤ ${GOAL_SECONDS} s`,
      met: metInEveryRound(rounds, GOAL_SECONDS, false) && allHits,
      notes: `load: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    });
  } finally {
    await server.stop();
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
