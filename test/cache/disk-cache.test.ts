import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { after, describe, test } from 'node:test';
import { selectRange } from '../../src/render-cache/byte-ranges.js';
import { DiskRenderCache } from '../../src/render-cache/disk-cache.js';
import type { CacheKey } from '../../src/render-cache/interface.js';
import { PublicationWarmer } from '../../src/render-cache/publication-warmer.js';

const root = mkdtempSync(join(tmpdir(), 'price-export-cache-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

const key = (id: string, storeId = 'shop', version = 1): CacheKey => ({ id, storeId, version });

/** A render of `chunks` chunks of `size` bytes, yielding to the event loop between them. */
function slowRender(chunks: number, size: number, calls: { count: number }, fill = 'x') {
  return source(async function* () {
    calls.count++;
    for (let i = 0; i < chunks; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      yield Buffer.from(`${i % 10}`.repeat(1) + fill.repeat(size - 1));
    }
  });
}

const source = (body: () => AsyncIterable<Uint8Array>) => ({ contentType: 'text/plain', body });

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

const dirBytes = (dir: string) => readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);

describe('DiskRenderCache', () => {
  test('concurrent readers share one render and read the same bytes', async () => {
    const cache = new DiskRenderCache({ root });
    const calls = { count: 0 };
    const render = slowRender(50, 10_000, calls);
    const bodies = await Promise.all(Array.from({ length: 100 }, () => text(cache.read(key('a'), render))));
    assert.equal(calls.count, 1);
    assert.equal(cache.stats().renders, 1);
    assert.equal(bodies[0].length, 500_000);
    for (const body of bodies) assert.equal(body, bodies[0]);
    const file = await cache.open(key('a'), 'identity');
    assert.equal(file?.size, 500_000);
    assert.equal(file?.contentType, 'text/plain');
    await file?.handle?.close();
    await cache.close();
  });

  test('locate names a finished file and its copies under the root, and nothing while rendering or after a newer list', async () => {
    const cache = new DiskRenderCache({ root });
    const calls = { count: 0 };
    assert.equal(cache.locate(key('loc', 'secret-shop'), 'identity'), null);
    const reading = text(cache.read(key('loc', 'secret-shop'), slowRender(20, 1_000, calls)));
    assert.equal(cache.locate(key('loc', 'secret-shop'), 'identity'), null, 'not while rendering');
    await reading;
    await cache.idle();
    const located = cache.locate(key('loc', 'secret-shop'), 'identity');
    assert.ok(located);
    assert.equal(located.size, 20_000);
    assert.equal(located.contentType, 'text/plain');
    assert.match(located.path, /^[0-9]+-[0-9a-f]{8}\/loc-\d+$/);
    assert.equal(statSync(join(root, located.path)).size, 20_000);
    assert.ok(!located.path.includes('secret-shop'));
    assert.equal(cache.locate(key('loc', 'secret-shop'), 'gzip'), null, 'no copy yet');
    cache.want(key('loc', 'secret-shop'), 'gzip');
    await until(async () => cache.locate(key('loc', 'secret-shop'), 'gzip') !== null);
    const gzip = cache.locate(key('loc', 'secret-shop'), 'gzip');
    assert.equal(gzip?.path, `${located.path}.gz`);
    assert.equal(statSync(join(root, gzip!.path)).size, gzip!.size);
    cache.noteLatest('secret-shop', 2);
    assert.equal(cache.locate(key('loc', 'secret-shop'), 'identity'), null, 'superseded');
    await cache.close();
  });

  test('a reader a few writes behind the render takes them from memory, not from the file', async () => {
    const cache = new DiskRenderCache({ root });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const chunk = (i: number) => Buffer.alloc(100_000, 'abcd'[i]);
    const render = source(async function* () {
      for (let i = 0; i < 3; i++) yield chunk(i);
      await gate;
      yield chunk(3);
    });
    const reader = cache.read(key('behind'), render);
    // Three writes made, the reader has read nothing yet (it starts when consumed).
    await until(async () => cache.stats().bytes === 300_000);
    // The file loses what is written: a reader that went to it now would find it short.
    const temp = readdirSync(cache.dir).find((name) => name.endsWith('.tmp'));
    assert.ok(temp);
    truncateSync(join(cache.dir, temp), 0);
    const body = (async () => Buffer.concat(await reader.toArray()))();
    release();
    assert.deepEqual(await body, Buffer.concat([0, 1, 2, 3].map(chunk)));
    await cache.close();
  });

  test('a failed render fails its readers, leaves nothing behind, and the next read renders again', async () => {
    const cache = new DiskRenderCache({ root });
    let attempts = 0;
    const render = source(async function* () {
      attempts++;
      yield Buffer.from('partial');
      if (attempts === 1) throw new Error('database gone');
      yield Buffer.from(' and whole');
    });
    await assert.rejects(text(cache.read(key('f'), render)), /database gone/);
    assert.equal(await cache.open(key('f'), 'identity'), null);
    assert.equal(await text(cache.read(key('f'), render)), 'partial and whole');
    assert.equal(attempts, 2);
    await cache.close();
  });

  test('the directory stays within its bound, least recently used out first', async () => {
    const cache = new DiskRenderCache({ root, maxBytes: 50_000 });
    const calls = { count: 0 };
    await cache.warm(key('keep'), slowRender(1, 12_000, calls));
    for (let i = 0; i < 10; i++) {
      await cache.warm(key(`k${i}`), slowRender(3, 4_000, calls));
      // Reading "keep" makes it the most recently used one.
      const kept = await cache.open(key('keep'), 'identity');
      assert.ok(kept, `keep survives round ${i}`);
      await kept.handle?.close();
      assert.ok(cache.stats().bytes <= 50_000);
      await cache.idle(); // evicted files are removed in the background
      assert.ok(dirBytes(cache.dir) <= 50_000, `round ${i}: ${dirBytes(cache.dir)} bytes on disk`);
    }
    assert.equal(await cache.open(key('k0'), 'identity'), null, 'the oldest went first');
    // "keep" and three of the ten 12 kB entries fit in 50 kB: each later one evicted one (the metrics read this count).
    assert.equal(cache.stats().evictions, 7);

    // A single render larger than the whole bound is served whole, then not kept.
    const big = await text(cache.read(key('big'), slowRender(8, 10_000, calls)));
    assert.equal(big.length, 80_000);
    await cache.idle();
    assert.equal(await cache.open(key('big'), 'identity'), null);
    assert.ok(dirBytes(cache.dir) <= 50_000);
    await cache.close();
  });

  test('a newer version of a store drops that store’s older entries only', async () => {
    const cache = new DiskRenderCache({ root });
    const calls = { count: 0 };
    await cache.warm(key('a1', 'a', 1), slowRender(1, 100, calls));
    await cache.warm(key('b1', 'b', 1), slowRender(1, 100, calls));
    cache.noteLatest('a', 2);
    assert.equal(await cache.open(key('a1', 'a', 1), 'identity'), null);
    const b = await cache.open(key('b1', 'b', 1), 'identity');
    assert.ok(b);
    await b.handle?.close();
    // A late request for the superseded list is still answered, but the result is not kept.
    assert.equal((await text(cache.read(key('a1', 'a', 1), slowRender(2, 100, calls)))).length, 200);
    await cache.idle();
    assert.equal(await cache.open(key('a1', 'a', 1), 'identity'), null);
    await cache.close();
  });

  test('small files are also held in memory, within the memory bound, and give the same bytes', async () => {
    const cache = new DiskRenderCache({ root, memoryBytes: 25_000 });
    const calls = { count: 0 };
    const bodies = new Map<string, Buffer>();
    for (const [id, fill] of [['m1', 'a'], ['m2', 'b'], ['m3', 'c']]) {
      await cache.warm(key(id), slowRender(2, 5_000, calls, fill));
      const fromDisk = await cache.open(key(id), 'identity');
      assert.ok(fromDisk?.handle, 'the first hit reads the file');
      const { buffer } = await fromDisk.handle.read(Buffer.alloc(fromDisk.size), 0, fromDisk.size, 0);
      await fromDisk.handle.close();
      bodies.set(id, buffer);
      await until(async () => (await cache.open(key(id), 'identity'))?.buffer != null);
    }
    for (const id of ['m2', 'm3']) {
      const held = await cache.open(key(id), 'identity');
      assert.deepEqual(held?.buffer, bodies.get(id));
    }
    assert.ok(cache.stats().memoryBytes <= 25_000);
    assert.equal((await cache.open(key('m1'), 'identity'))?.buffer, null, 'the least recently used one left memory (not the disk)');
    await cache.close();
  });

  test('close removes the cache directory', async () => {
    const cache = new DiskRenderCache({ root });
    await cache.warm(key('c'), slowRender(2, 100, { count: 0 }));
    await cache.close();
    assert.throws(() => statSync(cache.dir), /ENOENT/);
  });
});

describe('selectRange', () => {
  test('RFC 9110 §14 forms', () => {
    assert.deepEqual(selectRange('bytes=0-9', undefined, '"e"', 100), { start: 0, end: 9 });
    assert.deepEqual(selectRange('bytes=90-', undefined, '"e"', 100), { start: 90, end: 99 });
    assert.deepEqual(selectRange('bytes=-10', undefined, '"e"', 100), { start: 90, end: 99 });
    assert.deepEqual(selectRange('bytes=-500', undefined, '"e"', 100), { start: 0, end: 99 });
    assert.deepEqual(selectRange('bytes=50-500', undefined, '"e"', 100), { start: 50, end: 99 });
    assert.equal(selectRange('bytes=100-', undefined, '"e"', 100), 'unsatisfiable');
    assert.equal(selectRange('bytes=-0', undefined, '"e"', 100), 'unsatisfiable');
    assert.equal(selectRange(undefined, undefined, '"e"', 100), null);
    assert.equal(selectRange('bytes=5-1', undefined, '"e"', 100), null);
    assert.equal(selectRange('bytes=0-1,3-4', undefined, '"e"', 100), null);
    assert.equal(selectRange('bytes=0-9', '"other"', '"e"', 100), null);
    assert.deepEqual(selectRange('bytes=0-9', '"e"', '"e"', 100), { start: 0, end: 9 });
  });
});

describe('PublicationWarmer', () => {
  test('warms each store once per publication, in arrival order; a repeated event and a store published while waiting are warmed once', async () => {
    const warmed: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const warmer = new PublicationWarmer({
      warm: async (storeId) => {
        warmed.push(storeId);
        if (storeId === 'a') await gate;
      },
    });
    warmer.published([{ storeId: 'a', seq: 1 }]);
    // While 'a' renders: b, c, b again (a new publication), and 'a'@1 re-read by a catch-up.
    warmer.published([{ storeId: 'b', seq: 2 }, { storeId: 'c', seq: 3 }, { storeId: 'b', seq: 4 }, { storeId: 'a', seq: 1 }]);
    release();
    await warmer.idle();
    assert.deepEqual(warmed, ['a', 'b', 'c']);
    warmer.published([{ storeId: 'a', seq: 5 }]);
    await warmer.idle();
    assert.deepEqual(warmed, ['a', 'b', 'c', 'a']);
  });

  test('a failing warm is reported and the next store is warmed; stop waits for the warm in progress and takes nothing more', async () => {
    const errors: unknown[] = [];
    const warmed: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const warmer = new PublicationWarmer({
      warm: async (storeId) => {
        if (storeId === 'bad') throw new Error('db down');
        if (storeId === 'slow') await gate;
        warmed.push(storeId);
      },
      onError: (error) => errors.push(error),
    });
    warmer.published([{ storeId: 'bad', seq: 1 }, { storeId: 'good', seq: 2 }]);
    await warmer.idle();
    assert.equal(errors.length, 1);
    assert.deepEqual(warmed, ['good']);
    warmer.published([{ storeId: 'slow', seq: 3 }, { storeId: 'later', seq: 4 }]);
    const stopped = warmer.stop();
    release();
    await stopped;
    assert.deepEqual(warmed, ['good', 'slow'], 'the warm in progress finished; the waiting one was dropped');
    warmer.published([{ storeId: 'after', seq: 5 }]);
    await warmer.idle();
    assert.deepEqual(warmed, ['good', 'slow']);
  });

  test('warms storesAtOnce stores at the same time, never one store twice at once', async () => {
    const gates = new Map<string, () => void>();
    const started: string[] = [];
    let running = 0;
    let mostRunning = 0;
    const warmer = new PublicationWarmer({
      storesAtOnce: 2,
      warm: async (storeId) => {
        started.push(storeId);
        mostRunning = Math.max(mostRunning, ++running);
        await new Promise<void>((resolve) => gates.set(storeId, resolve));
        running--;
      },
    });
    const finish = async (storeId: string) => {
      gates.get(storeId)!();
      gates.delete(storeId);
      await new Promise((resolve) => setImmediate(resolve));
    };
    warmer.published([{ storeId: 'a', seq: 1 }, { storeId: 'b', seq: 2 }, { storeId: 'c', seq: 3 }]);
    assert.deepEqual(started, ['a', 'b'], 'two at once; c waits');
    await finish('b');
    assert.deepEqual(started, ['a', 'b', 'c'], 'c takes the freed place');
    // 'a' published again while it is being warmed, and a place frees: it waits for its own warm, not a second copy of it.
    warmer.published([{ storeId: 'a', seq: 4 }]);
    await finish('c');
    assert.deepEqual(started, ['a', 'b', 'c']);
    warmer.published([{ storeId: 'd', seq: 5 }]);
    assert.deepEqual(started, ['a', 'b', 'c', 'd'], 'a later store passes the one waiting for its own warm');
    await finish('a');
    assert.deepEqual(started, ['a', 'b', 'c', 'd', 'a'], 'a is warmed again at its newest list once its first warm ended');
    await finish('d');
    await finish('a');
    await warmer.idle();
    assert.equal(mostRunning, 2);
  });
});
