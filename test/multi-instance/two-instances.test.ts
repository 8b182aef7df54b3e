import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createEmptyDatabase, freePort, runCli, startServer, type ServerProcess } from './processes.js';

/**
 * Two real `price-export serve` processes on one PostgreSQL database and one Redis (CONTRACT
 * §4, §8): what one instance (or the command line) changes, the other sees on the next request,
 * and the per-store quota is counted across both.
 */
const PG = process.env.PRICE_EXPORT_TEST_PG_URL;
const REDIS = process.env.PRICE_EXPORT_TEST_REDIS_URL;
const skip = !PG || !REDIS
  ? 'needs PostgreSQL and Redis: set PRICE_EXPORT_TEST_PG_URL and PRICE_EXPORT_TEST_REDIS_URL (npm test sets them when the services answer)'
  : false;

const ADMIN_TOKEN = `multi-${randomBytes(12).toString('hex')}`;
const RATE_LIMIT = 40;
/** Unique per run: the Redis counters are keyed by store id, and earlier runs' may still be in their window. */
const RUN = randomBytes(4).toString('hex');
const SHOP = `multi-${RUN}`;
const LIMITED = `limited-${RUN}`;
const BYTES = `bytes-${RUN}`;

describe('two instances on one PostgreSQL and one Redis', { skip }, () => {
  let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
  let env: Record<string, string>;
  let a: ServerProcess;
  let b: ServerProcess;
  let adminBase: string;
  let tmp: string;
  const keys: string[] = [];

  const admin = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const response = await fetch(`${adminBase}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const json = await response.json();
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const issueKey = async (storeId: string): Promise<{ id: string; value: string }> => {
    const key = await admin('POST', `/admin/stores/${storeId}/keys`, { label: 'multi-instance test' });
    keys.push(key.value);
    return key;
  };
  const me = (server: ServerProcess, key: string) => fetch(`${server.base}/api/me`, { headers: { 'x-api-key': key } });
  const versionAt = async (server: ServerProcess, key: string) => {
    const response = await me(server, key);
    assert.equal(response.status, 200, `${server.base}: ${response.status}`);
    return (await response.json()).price_list?.version ?? null;
  };

  before(async () => {
    db = await createEmptyDatabase(PG!);
    tmp = mkdtempSync(join(tmpdir(), 'price-export-multi-'));
    const [portA, portB, adminPort] = await Promise.all([freePort(), freePort(), freePort()]);
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: REDIS!,
      RATE_LIMIT_PER_MIN: String(RATE_LIMIT),
      // Wrong keys from 127.0.0.1 are counted in Redis too, shared with any other suite running now; this test revokes keys on purpose.
      AUTH_FAIL_LIMIT_PER_MIN: '1000000',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    };
    // Both start at once on an empty database: each runs the migrations, under PostgreSQL's advisory lock.
    [a, b] = await Promise.all([
      startServer(portA, { ...env, ADMIN_TOKEN, ADMIN_PORT: String(adminPort) }, [adminPort]),
      startServer(portB, env),
    ]);
    adminBase = `http://127.0.0.1:${adminPort}`;
    await admin('POST', '/admin/stores', { id: SHOP, name: 'Two instances' });
    await admin('POST', '/admin/stores', { id: LIMITED, name: 'Rate limited' });
  });

  after(async () => {
    // Always stop both, even when `before` failed half-way.
    await Promise.all([a?.stop(), b?.stop()]);
    for (const server of [a, b]) {
      for (const key of keys) assert.ok(!server?.output().includes(key), 'a key appeared in a server log');
    }
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    await db?.drop();
  });

  test('only the instance with ADMIN_TOKEN has the admin API, and only on loopback', async () => {
    const refused = await fetch(`${adminBase}/admin/stores`);
    assert.equal(refused.status, 401);
    const stores = await admin('GET', '/admin/stores');
    assert.deepEqual(stores.stores.map((s: { id: string }) => s.id).sort(), [LIMITED, SHOP].sort());
    assert.equal((await fetch(`${b.base}/admin/stores`)).status, 404);
    // ADMIN_HOST defaults to loopback: the admin port refuses this machine's other addresses.
    const outside = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal);
    if (outside) await assert.rejects(fetch(`http://${outside.address}:${new URL(adminBase).port}/admin/stores`));
  });

  test('a publication through either path is served by both instances on the next request', async () => {
    const key = await issueKey(SHOP);
    assert.equal(await versionAt(a, key.value), null);
    assert.equal(await versionAt(b, key.value), null);

    const first = await admin('POST', `/admin/stores/${SHOP}/price-lists`, '{"offer_id":"ONE","name":"First","price":1}\n', 'application/x-ndjson');
    assert.equal(first.version, 1);
    for (const server of [b, a]) {
      assert.equal(await versionAt(server, key.value), 1);
      const csv = await (await fetch(`${server.base}/api/export/latest?key=${key.value}`)).text();
      assert.match(csv, /^ONE,First,1\.00,/m);
    }

    const file = join(tmp, 'second.ndjson');
    writeFileSync(file, '{"offer_id":"TWO","name":"Second","price":2}\n');
    const { stdout } = await runCli(['publish', '--store', SHOP, file], env);
    assert.equal(stdout.trim(), '2');
    for (const server of [a, b]) {
      assert.equal(await versionAt(server, key.value), 2);
      const csv = await (await fetch(`${server.base}/WebApi/CampaignDataLatestGet/${key.value}`)).text();
      assert.match(csv, /^TWO,Second,2\.00,/m);
      assert.doesNotMatch(csv, /ONE/);
    }
  });

  test('a key revoked on the command line gets 401 from both instances on the next request', async () => {
    const doomed = await issueKey(SHOP);
    const kept = await issueKey(SHOP);
    for (const server of [a, b]) assert.equal((await me(server, doomed.value)).status, 200);

    const { stdout } = await runCli(['key', 'revoke', doomed.id], env);
    assert.match(stdout, new RegExp(`^revoked ${doomed.id} at `));
    for (const server of [a, b]) {
      const refused = await fetch(`${server.base}/api/export/latest?key=${doomed.value}`);
      assert.equal(refused.status, 401);
      assert.equal((await refused.json()).code, 'revoked_key');
      assert.equal((await me(server, kept.value)).status, 200);
    }
  });

  test('one strong ETag names the same bytes on both instances, first (streamed) answer and cached alike', async () => {
    await admin('POST', '/admin/stores', { id: BYTES, name: 'One ETag, one byte sequence' });
    const key = await issueKey(BYTES);
    const lines = Array.from({ length: 3000 }, (_, i) =>
      JSON.stringify({ offer_id: `B-${i}`, name: `Item ${i} of a list for the compressors`, price: (100 + i * 0.37).toFixed(2), quantity: i % 4, category: `Group ${i % 7}` }),
    );
    await admin('POST', `/admin/stores/${BYTES}/price-lists`, lines.join('\n') + '\n', 'application/x-ndjson');
    for (const coding of ['gzip', 'br'] as const) {
      for (const format of ['csv', 'xlsx', 'yml']) {
        // only_available: not the legacy CSV the warmers pre-render, so both first answers stream a render.
        const path = `/api/export/latest?key=${key.value}&format=${format}&only_available=true`;
        const fromA = await rawGet(`${a.base}${path}`, coding);
        const fromB = await rawGet(`${b.base}${path}`, coding);
        assert.equal(fromA.headers['content-length'], undefined, `${format}/${coding}: A's first answer streams`);
        assert.equal(fromB.headers['content-length'], undefined, `${format}/${coding}: B's first answer streams`);
        assert.equal(fromB.headers.etag, fromA.headers.etag, `${format}/${coding}`);
        assert.deepEqual(fromB.body, fromA.body, `${format}/${coding}: the same bytes under one ETag on both instances`);
        let cached = fromA;
        for (let tries = 0; cached.headers['content-length'] === undefined; tries++) {
          assert.ok(tries < 200, `${format}/${coding}: A's compressed copy`);
          await sleep(50);
          cached = await rawGet(`${a.base}${path}`, coding);
        }
        assert.equal(cached.headers.etag, fromA.headers.etag);
        assert.deepEqual(cached.body, fromA.body, `${format}/${coding}: the cached copy is the streamed bytes`);
        const identity = await rawGet(`${a.base}${path}`, 'identity');
        assert.deepEqual((coding === 'gzip' ? gunzipSync : brotliDecompressSync)(cached.body), identity.body);
      }
    }
  });

  test(`the store quota (${RATE_LIMIT}/min) is counted across both instances`, async () => {
    const key = await issueKey(LIMITED);
    await awayFromWindowEdge();
    const answers: { server: string; status: number; headers: Headers }[] = [];
    for (const [server, name] of [[a, 'A'], [b, 'B']] as const) {
      for (let i = 0; i < 25; i++) {
        const response = await me(server, key.value);
        await response.arrayBuffer();
        answers.push({ server: name, status: response.status, headers: response.headers });
      }
    }
    const statuses = answers.map((x) => x.status);
    assert.deepEqual(statuses, [...Array(RATE_LIMIT).fill(200), ...Array(50 - RATE_LIMIT).fill(429)]);
    // B alone saw 25 requests, under the limit: its 429s come from A's requests counted in Redis.
    assert.ok(answers.slice(RATE_LIMIT).every((x) => x.server === 'B'));
    assert.match(answers[24].headers.get('ratelimit') ?? '', new RegExp(`r=${RATE_LIMIT - 25}\\b`));
    assert.match(answers[25].headers.get('ratelimit') ?? '', new RegExp(`r=${RATE_LIMIT - 26}\\b`));
    for (const limited of answers.slice(RATE_LIMIT)) {
      assert.match(limited.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      assert.match(limited.headers.get('ratelimit') ?? '', /r=0\b/);
      assert.equal(limited.headers.get('ratelimit-policy'), `"store";q=${RATE_LIMIT};w=60`);
      assert.equal(limited.headers.get('content-type'), 'application/problem+json');
    }
  });
});

/** The counters use clock-aligned one-minute windows: start well inside one, so 50 quick requests cannot straddle two. */
async function awayFromWindowEdge(): Promise<void> {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 45_000) await sleep(60_000 - intoWindow + 200);
}

/** The response's bytes as sent (fetch would decode the content coding). */
function rawGet(url: string, coding: 'gzip' | 'br' | 'identity'): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers: coding === 'identity' ? {} : { 'accept-encoding': coding } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        assert.equal(response.statusCode, 200, url.replace(/key=[^&]+/, 'key=…'));
        resolve({ headers: response.headers, body: Buffer.concat(chunks) });
      });
      response.on('error', reject);
    }).on('error', reject);
  });
}
