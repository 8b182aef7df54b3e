/**
 * Graceful shutdown of the real service process (src/http/graceful-shutdown.ts): on SIGTERM a
 * download in progress completes with all its bytes, a new request meanwhile gets 503
 * problem+json `unavailable` with Retry-After (the listener stays open while draining, rather
 * than refusing connections), and the process exits 0 once the last download is done.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ALL_LOG_LINES, createTestApp, findKeyLeaks, ISSUED_KEYS, SEEN_RESPONSES, storeWithKey } from '../support/test-app.js';
import {
  findChildKeyLeaks, findKeyLeaksAnyEncoding, freePort, httpGet, killStrayChildren, runCli, sleep, startService, type Service,
} from './child-service.js';

const ITEM_COUNT = 40_000;
/** Long names make a file (~25 MB as CSV) far larger than the loopback socket buffers, so a slow reader really is slow. */
const NAME_PAD = 'x'.repeat(560);
/** The slow reader's pace. */
const BYTES_PER_SECOND = 5 * 1024 * 1024;

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function writeItems(file: string): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < ITEM_COUNT; i++) {
    const line = `${JSON.stringify({ offer_id: `G-${i}`, name: `Item ${i} ${NAME_PAD}`, price: (i % 5000) + 0.5, quantity: i % 4 })}\n`;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

interface SlowDownload {
  /** Resolves with the whole body once the response has ended. */
  done: Promise<Buffer>;
  received(): number;
  ended(): boolean;
}

/** A download read at BYTES_PER_SECOND; `firstBytes` resolves once `threshold` bytes have arrived. */
function slowDownload(url: string, threshold: number): { download: SlowDownload; firstBytes: Promise<void> } {
  let received = 0;
  let ended = false;
  let reachedThreshold!: () => void;
  const firstBytes = new Promise<void>((resolve) => (reachedThreshold = resolve));
  const started = Date.now();
  const done = new Promise<Buffer>((resolve, reject) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (received >= threshold) reachedThreshold();
        const ahead = received / BYTES_PER_SECOND * 1000 - (Date.now() - started);
        if (ahead > 0) {
          res.pause();
          setTimeout(() => res.resume(), ahead);
        }
      });
      res.on('end', () => {
        ended = true;
        resolve(Buffer.concat(chunks));
      });
      res.on('error', reject);
      res.on('aborted', () => reject(new Error(`download cut after ${received} bytes`)));
    });
    req.on('error', reject);
    req.end();
  });
  return { download: { done, received: () => received, ended: () => ended }, firstBytes };
}

describe('graceful shutdown of the service process', () => {
  let dir: string;
  let env: Record<string, string>;
  let key: string;
  let service: Service | null = null;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'price-export-shutdown-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, RATE_LIMIT_PER_MIN: '100000' };
    await runCli(['store', 'create', '--id', 'drain-shop', '--name', 'Drain Shop'], env);
    key = (await runCli(['key', 'issue', '--store', 'drain-shop'], env, { secretStdout: true })).stdout.trim();
    const file = join(dir, 'items.ndjson');
    await writeItems(file);
    await runCli(['publish', '--store', 'drain-shop', file], env);
  });

  after(async () => {
    killStrayChildren();
    rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(findChildKeyLeaks([key]), []);
  });

  test('SIGTERM during a slow download: it completes with every byte, new requests get 503 with Retry-After, then the process exits 0', async () => {
    service = await startService(env, await freePort());
    const url = `${service.base}/api/export/latest?key=${key}`;
    const full = await httpGet(url);
    assert.equal(full.status, 200, `${full.body.toString().slice(0, 300)}\n${service.lines.slice(-5).join('\n')}`);
    assert.ok(full.body.length > 20 * 1024 * 1024, `a large file (${full.body.length} bytes)`);

    const { download, firstBytes } = slowDownload(url, 1024 * 1024);
    await firstBytes;
    service.child.kill('SIGTERM');
    await sleep(300);

    const refused = await httpGet(`${service.base}/api/me`, { 'x-api-key': key });
    assert.ok(!download.ended(), 'the download was still in progress when the new request came');
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['content-type'], 'application/problem+json');
    assert.equal(JSON.parse(refused.body.toString()).code, 'unavailable');
    assert.equal(refused.headers['retry-after'], '5');
    assert.equal(refused.headers.connection, 'close');
    assert.equal(refused.headers['x-content-type-options'], 'nosniff');
    assert.ok(refused.ms < 1000);

    const body = await download.done;
    assert.equal(body.length, full.body.length);
    assert.equal(sha(body), sha(full.body), 'the download in progress completed with all its bytes');

    const exit = await Promise.race([service.exited, sleep(10_000).then(() => null)]);
    assert.deepEqual(exit, { code: 0, signal: null }, 'exits 0 soon after the last download');
    await assert.rejects(httpGet(`${service.base}/api/me`), /ECONNREFUSED/);
    const entries = service.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const shutdown = entries.find((entry) => /shutting down/.test(entry.msg));
    assert.ok(shutdown && shutdown.inFlight >= 1, 'the shutdown is logged with the requests in flight');
    assert.ok(entries.some((entry) => entry.msg === 'shut down'));
  });

  test('SIGTERM with nothing in flight (an idle keep-alive connection open): exits 0 at once', async () => {
    service = await startService(env, await freePort());
    const agent = new Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => {
      httpRequest(`${service!.base}/api/me`, { agent, headers: { 'x-api-key': key } }, (res) => {
        res.resume();
        res.on('end', resolve);
      }).on('error', reject).end();
    });
    const started = Date.now();
    service.child.kill('SIGTERM');
    const exit = await Promise.race([service.exited, sleep(5_000).then(() => null)]);
    agent.destroy();
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(Date.now() - started < 3_000, `exited in ${Date.now() - started} ms`);
  });
});

describe('draining, in process', () => {
  test('while draining, every address answers 503 problem+json unavailable with Retry-After and Connection: close', async () => {
    const t = await createTestApp('sqlite');
    try {
      const key = await storeWithKey(t.db, 'drain-inproc');
      assert.equal((await t.app.inject({ url: '/api/me', headers: { 'x-api-key': key } })).statusCode, 200);
      const drain = t.app.drain!;
      assert.equal(drain.inFlight, 0, 'a finished request is no longer in flight');
      assert.equal(await drain.settled(1000), true);
      drain.begin();
      for (const url of ['/api/me', `/api/export/latest?key=${key}`, `/WebApi/CampaignDataLatestGet/${key}`, '/no/such/address', '/openapi.json']) {
        const response = await t.app.inject({ url, headers: { 'x-api-key': key } });
        assert.equal(response.statusCode, 503, url);
        assert.equal(response.headers['content-type'], 'application/problem+json');
        assert.equal(JSON.parse(response.body).code, 'unavailable');
        assert.equal(response.headers['retry-after'], '5');
        assert.equal(response.headers.connection, 'close');
        assert.equal(response.headers['x-content-type-options'], 'nosniff');
      }
    } finally {
      await t.close();
    }
    assert.deepEqual(findKeyLeaks(), []);
    assert.deepEqual(findKeyLeaksAnyEncoding(ISSUED_KEYS, [...ALL_LOG_LINES, ...SEEN_RESPONSES]), []);
  });
});
