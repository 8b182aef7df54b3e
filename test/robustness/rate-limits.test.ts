/**
 * CONTRACT §8 through the real app: a store's quota across its keys, a client's wrong-key
 * allowance, failed keys never touching a store's quota, the 429 answer and the RateLimit
 * headers; then the same counters shared through Redis by two app instances, and what
 * happens when Redis goes away mid-run (fail open, see src/http/request-gate.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { buildPublicApp } from '../../src/composition.js';
import { OUTAGE_BACKOFF_MS } from '../../src/http/request-gate.js';
import type { RateCounter } from '../../src/rate-limit/interface.js';
import { RedisCounter } from '../../src/rate-limit/redis-counter.js';
import { testClock } from '../support/clock.js';
import { createTestDatabase, type TestDatabase } from '../support/dialects.js';
import { ALL_LOG_LINES, findKeyLeaks, ISSUED_KEYS, newKey, publishJson, SEEN_RESPONSES, storeWithKey } from '../support/test-app.js';
import { findKeyLeaksAnyEncoding, freePort, sleep, TcpProxy } from './child-service.js';

const REDIS_URL = process.env.PRICE_EXPORT_TEST_REDIS_URL;
const STORE_LIMIT = 5;
const FAIL_LIMIT = 3;
const ITEMS = [{ offer_id: 'A1', name: 'Alpha', price: 10 }];
/**
 * The counters' clock: fixed 1 s into a minute and moved only by hand, so no sequence of requests
 * straddles a window boundary and no test waits for one.
 */
const clock = testClock(1_000);
/** Counters live in Redis for a minute: every run uses its own store ids and client addresses. */
const RUN = randomBytes(3).toString('hex');
let clientSeq = 0;
const newClient = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${++clientSeq}`;

interface GateApp {
  app: FastifyInstance;
  logLines: string[];
}

async function gateApp(testDb: TestDatabase, counter?: RateCounter): Promise<GateApp> {
  // The default (in-memory) counters and the gate's outage back-off read the test's clock.
  const config = loadConfig({ DATABASE_URL: testDb.url, LOG_LEVEL: 'info', RATE_LIMIT_PER_MIN: String(STORE_LIMIT), AUTH_FAIL_LIMIT_PER_MIN: String(FAIL_LIMIT) });
  const logLines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(chunk.toString());
      ALL_LOG_LINES.push(chunk.toString());
      done();
    },
  });
  const app = await buildPublicApp({ config, db: testDb.db, counter, logStream, now: clock.now });
  await app.ready();
  return { app, logLines };
}

async function call(app: FastifyInstance, url: string, client: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const response = await app.inject({ method, url, headers, remoteAddress: client });
  SEEN_RESPONSES.push(JSON.stringify(response.headers) + response.body);
  return response;
}

const exportUrl = (key: string) => `/api/export/latest?key=${key}`;

type Answer = Awaited<ReturnType<typeof call>>;

function assertQuota(response: Answer, policy: string, limit: number, remaining: number) {
  assert.equal(response.headers['ratelimit-policy'], `"${policy}";q=${limit};w=60`);
  const match = /^"([a-z-]+)";r=(\d+);t=(\d+)$/.exec(String(response.headers.ratelimit));
  assert.ok(match, `RateLimit header: ${response.headers.ratelimit}`);
  assert.equal(match[1], policy);
  assert.equal(Number(match[2]), remaining);
  assert.ok(Number(match[3]) >= 0 && Number(match[3]) <= 60);
}

function assertLimited(response: Answer, policy: string, limit: number) {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(response.headers['content-type'], 'application/problem+json');
  const body = JSON.parse(response.body);
  assert.equal(body.code, 'rate_limited');
  assert.equal(body.status, 429);
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${response.headers['retry-after']}`);
  assertQuota(response, policy, limit, 0);
  assert.ok(Math.abs(Number(/t=(\d+)/.exec(String(response.headers.ratelimit))![1]) - retryAfter) <= 1, 'RateLimit t agrees with Retry-After');
}

describe('rate limits (in-memory counters)', () => {
  let testDb: TestDatabase;
  let gate: GateApp;
  before(async () => {
    testDb = await createTestDatabase('sqlite');
    gate = await gateApp(testDb);
  });
  after(async () => {
    await gate.app.close();
    await testDb.drop();
    assert.deepEqual(findKeyLeaks(), []);
    assert.deepEqual(findKeyLeaksAnyEncoding(ISSUED_KEYS, [...ALL_LOG_LINES, ...SEEN_RESPONSES]), []);
  });

  test('a store may make RATE_LIMIT_PER_MIN requests a minute; the next gets 429 with Retry-After and RateLimit headers', async () => {
    const key = await storeWithKey(testDb.db, `limit-${RUN}`);
    await publishJson(testDb.db, `limit-${RUN}`, ITEMS);
    const client = newClient();
    for (let i = 1; i <= STORE_LIMIT; i++) {
      const response = await call(gate.app, exportUrl(key), client);
      assert.equal(response.statusCode, 200);
      assertQuota(response, 'store', STORE_LIMIT, STORE_LIMIT - i);
    }
    assertLimited(await call(gate.app, exportUrl(key), client), 'store', STORE_LIMIT);
    // Another client address changes nothing: the quota is the store's.
    assertLimited(await call(gate.app, '/api/me', newClient(), { 'x-api-key': key }), 'store', STORE_LIMIT);
  });

  test('the quota comes back when the clock reaches the next minute, and not a moment before', async () => {
    const key = await storeWithKey(testDb.db, `window-${RUN}`);
    await publishJson(testDb.db, `window-${RUN}`, ITEMS);
    const client = newClient();
    for (let i = 1; i <= STORE_LIMIT; i++) assert.equal((await call(gate.app, exportUrl(key), client)).statusCode, 200);
    const limited = await call(gate.app, exportUrl(key), client);
    assertLimited(limited, 'store', STORE_LIMIT);
    const untilNextMinute = 60_000 - (clock.now() % 60_000);
    assert.equal(Number(limited.headers['retry-after']), Math.ceil(untilNextMinute / 1000));
    clock.advance(untilNextMinute - 1);
    assertLimited(await call(gate.app, exportUrl(key), client), 'store', STORE_LIMIT);
    clock.advance(1);
    const next = await call(gate.app, exportUrl(key), client);
    assert.equal(next.statusCode, 200);
    assertQuota(next, 'store', STORE_LIMIT, STORE_LIMIT - 1);
    assert.equal(next.headers.ratelimit, `"store";r=${STORE_LIMIT - 1};t=60`);
  });

  test('two keys of one store share one quota; another store keeps its own', async () => {
    const first = await storeWithKey(testDb.db, `shared-${RUN}`);
    const second = await newKey(testDb.db, `shared-${RUN}`);
    const other = await storeWithKey(testDb.db, `other-${RUN}`);
    await publishJson(testDb.db, `shared-${RUN}`, ITEMS);
    await publishJson(testDb.db, `other-${RUN}`, ITEMS);
    const client = newClient();
    for (let i = 1; i <= STORE_LIMIT; i++) {
      const response = await call(gate.app, i % 2 ? exportUrl(first) : `/WebApi/CampaignDataLatestGet/${second}`, client);
      assert.equal(response.statusCode, 200);
      assertQuota(response, 'store', STORE_LIMIT, STORE_LIMIT - i);
    }
    assertLimited(await call(gate.app, exportUrl(second), client), 'store', STORE_LIMIT);
    assertLimited(await call(gate.app, exportUrl(first), client), 'store', STORE_LIMIT);
    const untouched = await call(gate.app, exportUrl(other), client);
    assert.equal(untouched.statusCode, 200);
    assertQuota(untouched, 'store', STORE_LIMIT, STORE_LIMIT - 1);
  });

  test('wrong keys count against the client, never against a store', async () => {
    const key = await storeWithKey(testDb.db, `victim-${RUN}`);
    await publishJson(testDb.db, `victim-${RUN}`, ITEMS);
    const guesser = newClient();
    const wrong = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
    for (let i = 1; i <= FAIL_LIMIT; i++) {
      const response = await call(gate.app, exportUrl(i === 1 ? 'unknown-legacy-key' : wrong), guesser);
      assert.equal(response.statusCode, 401);
      assertQuota(response, 'auth-fail', FAIL_LIMIT, FAIL_LIMIT - i);
    }
    assertLimited(await call(gate.app, exportUrl(wrong), guesser), 'auth-fail', FAIL_LIMIT);
    // Once limited, the guesser's right key is refused like a wrong one and does not use up the store's quota.
    assertLimited(await call(gate.app, exportUrl(key), guesser), 'auth-fail', FAIL_LIMIT);
    // The store whose key was guessed at still has its whole quota.
    const owner = await call(gate.app, exportUrl(key), newClient());
    assert.equal(owner.statusCode, 200);
    assertQuota(owner, 'store', STORE_LIMIT, STORE_LIMIT - 1);
  });

  test('a missing key is not a wrong key: it never uses up the client’s allowance', async () => {
    const client = newClient();
    for (let i = 0; i < FAIL_LIMIT * 3; i++) {
      const response = await call(gate.app, '/api/export/latest', client);
      assert.equal(response.statusCode, 401);
      assert.equal(JSON.parse(response.body).code, 'missing_key');
      assert.equal(response.headers.ratelimit, undefined);
    }
  });

  test('304 and HEAD answers count and carry the headers too', async () => {
    const key = await storeWithKey(testDb.db, `cond-${RUN}`);
    await publishJson(testDb.db, `cond-${RUN}`, ITEMS);
    const client = newClient();
    const first = await call(gate.app, exportUrl(key), client);
    const conditional = await call(gate.app, exportUrl(key), client, { 'if-none-match': String(first.headers.etag) });
    assert.equal(conditional.statusCode, 304);
    assertQuota(conditional, 'store', STORE_LIMIT, STORE_LIMIT - 2);
    const head = await call(gate.app, exportUrl(key), client, {}, 'HEAD');
    assert.equal(head.statusCode, 200);
    assertQuota(head, 'store', STORE_LIMIT, STORE_LIMIT - 3);
  });
});

describe('rate limits shared through Redis', { skip: REDIS_URL ? false : 'PRICE_EXPORT_TEST_REDIS_URL is not set: the Redis counters are not tested (npm test sets it when Redis answers)' }, () => {
  let testDb: TestDatabase;
  let counters: RateCounter[] = [];
  let one: GateApp;
  let two: GateApp;
  before(async () => {
    testDb = await createTestDatabase('sqlite');
    counters = [await RedisCounter.connect(REDIS_URL!, { now: clock.now }), await RedisCounter.connect(REDIS_URL!, { now: clock.now })];
    one = await gateApp(testDb, counters[0]);
    two = await gateApp(testDb, counters[1]);
  });
  after(async () => {
    await one?.app.close();
    await two?.app.close();
    for (const counter of counters) await counter.close();
    await testDb?.drop();
    assert.deepEqual(findKeyLeaks(), []);
    assert.deepEqual(findKeyLeaksAnyEncoding(ISSUED_KEYS, [...ALL_LOG_LINES, ...SEEN_RESPONSES]), []);
  });

  test('two instances sharing one Redis see one count per store', async () => {
    const storeId = `redis-${RUN}`;
    const first = await storeWithKey(testDb.db, storeId);
    const second = await newKey(testDb.db, storeId);
    await publishJson(testDb.db, storeId, ITEMS);
    const client = newClient();
    for (let i = 1; i <= STORE_LIMIT; i++) {
      const response = await call(i % 2 ? one.app : two.app, exportUrl(i % 3 ? first : second), client);
      assert.equal(response.statusCode, 200);
      assertQuota(response, 'store', STORE_LIMIT, STORE_LIMIT - i);
    }
    assertLimited(await call(one.app, exportUrl(first), client), 'store', STORE_LIMIT);
    assertLimited(await call(two.app, exportUrl(second), client), 'store', STORE_LIMIT);
  });

  test('two instances sharing one Redis see one count of a client’s wrong keys', async () => {
    const storeId = `redis-victim-${RUN}`;
    const key = await storeWithKey(testDb.db, storeId);
    await publishJson(testDb.db, storeId, ITEMS);
    const guesser = newClient();
    for (let i = 1; i <= FAIL_LIMIT; i++) {
      const response = await call(i % 2 ? one.app : two.app, exportUrl(`wrong-key-${i}`), guesser);
      assert.equal(response.statusCode, 401);
      assertQuota(response, 'auth-fail', FAIL_LIMIT, FAIL_LIMIT - i);
    }
    assertLimited(await call(one.app, exportUrl('wrong-key-x'), guesser), 'auth-fail', FAIL_LIMIT);
    assertLimited(await call(two.app, exportUrl(key), guesser), 'auth-fail', FAIL_LIMIT);
    const owner = await call(one.app, exportUrl(key), newClient());
    assertQuota(owner, 'store', STORE_LIMIT, STORE_LIMIT - 1);
  });

  /** How many times the gate asked the counters (hit, peek or hitUnlessOver), so far. */
  interface AskedCounter { counter: RedisCounter; asks(): number }

  function countingAsks(counter: RedisCounter): AskedCounter {
    let asks = 0;
    const counted = new Proxy(counter, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property !== 'hit' && property !== 'peek' && property !== 'hitUnlessOver') return typeof value === 'function' ? value.bind(target) : value;
        return (...args: unknown[]) => { asks++; return (value as (...a: unknown[]) => unknown).apply(target, args); };
      },
    });
    return { counter: counted, asks: () => asks };
  }

  /** An app whose counters reach Redis through a proxy of ours, so Redis can be cut without touching it. */
  async function behindProxy(): Promise<{ proxy: TcpProxy; asks(): number; flaky: GateApp; close(): Promise<void> }> {
    const { hostname, port } = new URL(REDIS_URL!);
    const proxy = new TcpProxy(hostname, Number(port || 6379));
    await proxy.start();
    const counted = countingAsks(await RedisCounter.connect(`redis://127.0.0.1:${proxy.port}`, { now: clock.now }));
    const flaky = await gateApp(testDb, counted.counter);
    return { proxy, asks: counted.asks, flaky, close: async () => { await flaky.app.close(); await counted.counter.close(); await proxy.close(); } };
  }

  async function assertServedUncounted(app: FastifyInstance, url: string, client: string) {
    const response = await call(app, url, client);
    assert.equal(response.statusCode, 200, 'fail open: the store is served while the counters are away');
    assert.equal(response.headers.ratelimit, undefined, 'no quota is claimed that was not counted');
  }

  /**
   * An outage costs no latency after its first request: the gate asks the counters once, and
   * not again until the back-off has passed on its clock (which the test holds still), so no
   * later request can wait on Redis. Counted, not timed.
   */
  async function assertOutageAskedOnce(app: FastifyInstance, url: string, client: string, asks: () => number) {
    const before = asks();
    await assertServedUncounted(app, url, client);
    assert.equal(asks(), before + 1, 'the first request during the outage asks the counters');
    for (let i = 0; i < STORE_LIMIT * 2; i++) await assertServedUncounted(app, url, client);
    clock.advance(OUTAGE_BACKOFF_MS - 1);
    await assertServedUncounted(app, url, client);
    assert.equal(asks(), before + 1, 'no request after it waits on the counters during the back-off');
  }

  /** Redis is back: once the back-off (OUTAGE_BACKOFF_MS) has passed on the test's clock, requests are counted again. */
  async function awaitCounting(app: FastifyInstance, url: string, client: string): Promise<Answer> {
    // Reconnection is real network work in ioredis' background; the poll waits for it, bounded.
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      // A whole window: past the back-off, and at the same second of the next minute, so the
      // sequences of the tests that follow never straddle a window boundary.
      clock.advance(60_000);
      const response = await call(app, url, client);
      if (response.headers.ratelimit !== undefined) return response;
      await sleep(100);
    }
    assert.fail('counting did not resume within 15 s of Redis coming back');
  }

  const outageWarnings = (lines: string[]) => lines.map((line) => JSON.parse(line)).filter((entry) => /counters unreachable/.test(entry.msg));

  test('Redis refusing mid-run: requests are admitted at once without limits, one warning is logged, counting resumes when it is back', async () => {
    const { proxy, asks, flaky, close } = await behindProxy();
    try {
      const storeId = `redis-outage-${RUN}`;
      const key = await storeWithKey(testDb.db, storeId);
      await publishJson(testDb.db, storeId, ITEMS);
      const client = newClient();
      assertQuota(await call(flaky.app, exportUrl(key), client), 'store', STORE_LIMIT, STORE_LIMIT - 1);

      await proxy.cut();
      // The first ask may race ioredis noticing the cut connection and wait out the command timeout; none after it waits.
      await assertOutageAskedOnce(flaky.app, exportUrl(key), client, asks);
      // A wrong key is still refused (401), not turned into a 500 by the missing counter.
      assert.equal((await call(flaky.app, exportUrl('wrong-key-during-outage'), client)).statusCode, 401);
      const warnings = outageWarnings(flaky.logLines);
      assert.equal(warnings.length, 1, 'one warning per outage, not one per request');
      assert.equal(warnings[0].level, 40);

      await proxy.restore();
      assert.equal((await awaitCounting(flaky.app, exportUrl(key), client)).statusCode, 200);
    } finally {
      await close();
    }
  });

  test('Redis unreachable at start: the app starts, admits uncounted, and counts once Redis answers', async () => {
    const { hostname, port } = new URL(REDIS_URL!);
    const proxy = new TcpProxy(hostname, Number(port || 6379));
    proxy.port = await freePort();
    const counter = await RedisCounter.connect(`redis://127.0.0.1:${proxy.port}`, { now: clock.now });
    const late = await gateApp(testDb, counter);
    try {
      const storeId = `redis-late-${RUN}`;
      const key = await storeWithKey(testDb.db, storeId);
      await publishJson(testDb.db, storeId, ITEMS);
      const client = newClient();
      await assertServedUncounted(late.app, exportUrl(key), client);
      assert.equal(outageWarnings(late.logLines).length, 1);
      await proxy.start();
      assert.equal((await awaitCounting(late.app, exportUrl(key), client)).statusCode, 200);
    } finally {
      await late.app.close();
      await counter.close();
      await proxy.close();
    }
  });

  test('Redis hanging mid-run (a partition: nothing refused, nothing answered): one request waits the command timeout, the rest none', async () => {
    const { proxy, asks, flaky, close } = await behindProxy();
    try {
      const storeId = `redis-hang-${RUN}`;
      const key = await storeWithKey(testDb.db, storeId);
      await publishJson(testDb.db, storeId, ITEMS);
      const client = newClient();
      assertQuota(await call(flaky.app, exportUrl(key), client), 'store', STORE_LIMIT, STORE_LIMIT - 1);

      proxy.blackhole();
      await assertOutageAskedOnce(flaky.app, exportUrl(key), client, asks);
      assert.equal(outageWarnings(flaky.logLines).length, 1);

      await proxy.restore();
      assert.equal((await awaitCounting(flaky.app, exportUrl(key), client)).statusCode, 200);
    } finally {
      await close();
    }
  });
});
