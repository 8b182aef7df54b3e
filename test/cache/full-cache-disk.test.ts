/**
 * #20.6: the render cache's disk full. The test mounts a 1 MiB tmpfs of its own as CACHE_DIR
 * (root only; skipped, loudly, otherwise): an export larger than the disk answers 200 and is
 * whole, not cut at the disk's size; with the disk completely full a small export still answers
 * 200; the failure is logged once, not per request.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { buildPublicApp } from '../../src/composition.js';
import { createTestDatabase, type TestDatabase } from '../support/dialects.js';
import { collectingLogStream, publishJson, storeWithKey } from '../support/test-app.js';

/** Mounts a 1 MiB tmpfs; the reason it cannot when it cannot. */
function mountSmallDisk(): { dir: string; unmount(): void } | string {
  if (process.getuid?.() !== 0) return 'not running as root: cannot mount a small tmpfs for the full-disk test';
  const dir = mkdtempSync(join(tmpdir(), 'pe-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', dir]);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return `mount -t tmpfs failed (${(error as Error).message.split('\n')[0]}): the full-disk test cannot run here`;
  }
  return { dir, unmount: () => { execFileSync('umount', ['-l', dir]); rmSync(dir, { recursive: true, force: true }); } };
}

function download(url: string): Promise<{ status: number; body: string; complete: boolean }> {
  return new Promise((resolve) => {
    httpGet(url, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      const done = () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString('utf8'), complete: response.complete });
      response.on('end', done);
      response.on('error', done);
      response.on('aborted', done);
    }).on('error', () => resolve({ status: 0, body: '', complete: false }));
  });
}

const small = mountSmallDisk();
if (typeof small === 'string') console.error(`SKIPPED full-disk cache test: ${small}`);

describe('a full render cache disk', { skip: typeof small === 'string' ? small : false }, () => {
  let testDb: TestDatabase;
  const disk = small as { dir: string; unmount(): void };
  before(async () => { testDb = await createTestDatabase('sqlite'); });
  after(async () => {
    await testDb.drop();
    disk.unmount();
  });

  test('a large export is whole with 200, a small one is served with the disk completely full, and the failure is logged once', async () => {
    const bigKey = await storeWithKey(testDb.db, 'big');
    const bigItems = Array.from({ length: 25_000 }, (_, i) => ({ offer_id: `SKU-${i}`, name: `A rather long product name number ${i}`, price: 1000 + i }));
    await publishJson(testDb.db, 'big', bigItems);
    const smallKey = await storeWithKey(testDb.db, 'small');
    await publishJson(testDb.db, 'small', Array.from({ length: 20 }, (_, i) => ({ offer_id: `S-${i}`, name: `s${i}`, price: 1 })));
    const lines: string[] = [];
    const config = loadConfig({ DATABASE_URL: testDb.url, LOG_LEVEL: 'info', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000', CACHE_DIR: disk.dir });
    const app = await buildPublicApp({ config, db: testDb.db, logStream: collectingLogStream(lines) });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const big = await download(`${base}/api/export/latest?key=${bigKey}&format=csv`);
      assert.equal(big.status, 200);
      assert.ok(big.complete, `the large export was cut at ${big.body.length} bytes`);
      assert.ok(big.body.length > 1024 * 1024, 'larger than the disk');
      const rows = big.body.split('\r\n').filter((row) => row !== '');
      assert.equal(rows.length, bigItems.length + 1, 'every row and the header');
      assert.ok(rows.at(-1)!.startsWith(`SKU-${bigItems.length - 1}`));

      // Fill what is left of the disk completely.
      try { writeFileSync(join(disk.dir, 'filler'), Buffer.alloc(2 * 1024 * 1024)); } catch { /* ENOSPC: full now */ }
      for (let i = 0; i < 3; i++) {
        const answer = await download(`${base}/api/export/latest?key=${smallKey}&format=csv`);
        assert.equal(answer.status, 200, answer.body);
        assert.ok(answer.complete);
        assert.equal(answer.body.split('\r\n').filter((row) => row !== '').length, 21);
      }
      const again = await download(`${base}/api/export/latest?key=${bigKey}&format=json`);
      assert.equal(again.status, 200);
      assert.ok(again.complete);
      assert.equal(JSON.parse(again.body).items?.length ?? JSON.parse(again.body).length, bigItems.length);
      const diskLines = lines.filter((line) => /disk full or failing/.test(line));
      assert.equal(diskLines.length, 1, `logged once: ${diskLines.length}`);
    } finally {
      await app.close();
    }
  });
});
