/**
 * #20 finding 9: the render cache holds every store's exports, so its directories are 0700 and
 * its files 0600, a root that is a symbolic link or belongs to someone else is refused (the
 * service then runs without a cache and says why), and CACHE_DIR chooses the root.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { DiskRenderCache } from '../../src/render-cache/disk-cache.js';
import { openRenderCache } from '../../src/render-cache/factory.js';
import { NoRenderCache } from '../../src/render-cache/no-cache.js';
import { createTestApp, get, publishJson, storeWithKey } from '../support/test-app.js';

const base = mkdtempSync(join(tmpdir(), 'price-export-cache-privacy-'));
after(() => rmSync(base, { recursive: true, force: true }));

const modeOf = (path: string) => statSync(path).mode & 0o777;
const source = (body: string) => ({ contentType: 'text/plain', body: async function* () { yield Buffer.from(body); } });
const warnings: string[] = [];
const log = { info: () => undefined, warn: (object: object, message: string) => void warnings.push(`${message} ${JSON.stringify(object)}`) };

describe('render cache privacy', () => {
  test('a new root and the instance directory are 0700, the files and their gzip/br copies 0600', async () => {
    const root = join(base, 'fresh', 'cache');
    const cache = new DiskRenderCache({ root, memoryBytes: 0 });
    try {
      const key = { id: 'k1', storeId: 'shop', version: 1 };
      assert.equal(await text(cache.read(key, source('x'.repeat(10_000)))), 'x'.repeat(10_000));
      cache.want(key, 'gzip');
      cache.want(key, 'br');
      for (let i = 0; i < 200 && (!(await cache.open(key, 'gzip')) || !(await cache.open(key, 'br'))); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(modeOf(root), 0o700);
      const [instance] = readdirSync(root);
      assert.equal(modeOf(join(root, instance)), 0o700);
      const files = readdirSync(join(root, instance));
      assert.ok(files.length >= 3, `the file and two copies: ${files.join(', ')}`);
      for (const file of files) assert.equal(modeOf(join(root, instance, file)), 0o600, file);
    } finally {
      await cache.close();
    }
  });

  test('a root of ours left world-writable (mode 777) is tightened to 0700', async () => {
    const root = join(base, 'loose');
    mkdirSync(root, { mode: 0o777 });
    chmodSync(root, 0o777);
    const cache = new DiskRenderCache({ root });
    await cache.close();
    assert.equal(modeOf(root), 0o700);
  });

  test('a root that is a symbolic link is refused: no cache, a warning that says why, nothing written where it points', async () => {
    const target = join(base, 'elsewhere');
    mkdirSync(target, { mode: 0o700 });
    const root = join(base, 'planted-link');
    symlinkSync(target, root);
    assert.throws(() => new DiskRenderCache({ root }), /is a symbolic link/);
    assert.ok(openRenderCache(log, { root }) instanceof NoRenderCache);
    assert.match(warnings.at(-1) ?? '', /render cache unavailable.*is a symbolic link/);
    assert.deepEqual(readdirSync(target), []);
  });

  test('a root another user owns is refused', { skip: process.getuid?.() !== 0 && 'needs root to make a directory another user owns' }, async () => {
    const root = join(base, 'foreign');
    mkdirSync(root, { mode: 0o777 });
    chownSync(root, 65534, 65534);
    assert.throws(() => new DiskRenderCache({ root }), /belongs to uid 65534/);
    assert.deepEqual(readdirSync(root), []);
  });

  test('CACHE_DIR chooses the root the app renders into; a relative one is a configuration error', async () => {
    assert.throws(() => loadConfig({ CACHE_DIR: 'relative/cache' }), /CACHE_DIR must be an absolute path/);
    const root = join(base, 'configured');
    const t = await createTestApp('sqlite', { CACHE_DIR: root });
    try {
      const key = await storeWithKey(t.db, 'cached');
      await publishJson(t.db, 'cached', [{ offer_id: 'A', name: 'a', price: 1 }]);
      assert.equal((await get(t.app, `/api/export/latest?key=${key}&format=json`)).statusCode, 200);
      assert.equal(modeOf(root), 0o700);
      const [instance] = readdirSync(root);
      assert.ok(readdirSync(join(root, instance)).length > 0, 'the export was cached under CACHE_DIR');
    } finally {
      await t.close();
    }
  });
});
