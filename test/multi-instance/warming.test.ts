import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { until } from '../support/until.js';
import { untilDemandWritten } from '../support/variant-demand.js';
import { createEmptyDatabase, freePort, startServer, type ServerProcess } from './processes.js';
import { adminCaller } from '../support/admin-client.js';

/**
 * Issue #16, part 3, across processes on PostgreSQL: variants fetched from instance A are
 * recorded in the database; a publication through A's admin API reaches instance B by
 * LISTEN/NOTIFY, and B renders every one of those variants (and codings) before anyone asks
 * it, so a fetcher's first request to B is a cache hit with Content-Length.
 */
const PG = process.env.PRICE_EXPORT_TEST_PG_URL;
const skip = !PG ? 'needs PostgreSQL: set PRICE_EXPORT_TEST_PG_URL (npm test sets it when PostgreSQL answers)' : false;

const ADMIN_TOKEN = `warm-${randomBytes(12).toString('hex')}`;
const SHOP = `warm-${randomBytes(4).toString('hex')}`;


/** The response's headers and bytes as sent (fetch would decode the content coding). */
function raw(url: string, coding: string, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { method, headers: coding === 'identity' ? {} : { 'accept-encoding': coding } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    }).on('error', reject).end();
  });
}

describe('hot variants are pre-rendered on every instance after a publication on another (PostgreSQL)', { skip }, () => {
  let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
  let a: ServerProcess;
  let b: ServerProcess;
  let adminBase: string;
  let key = '';

  const admin = adminCaller(() => adminBase, ADMIN_TOKEN);
  const publish = (tag: string) =>
    // ?force=true: each list replaces the whole catalogue on purpose (the guard of §10 would hold it).
    admin('POST', `/admin/stores/${SHOP}/price-lists?force=true`,
      Array.from({ length: 2000 }, (_, i) => JSON.stringify({ offer_id: `${tag}-${i}`, name: `Item ${i}`, price: (10 + i / 100).toFixed(2), quantity: i % 3, category: `G${i % 5}` })).join('\n') + '\n',
      'application/x-ndjson');

  before(async () => {
    db = await createEmptyDatabase(PG!);
    const [portA, portB, adminPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const env = { DATABASE_URL: db.url, LOG_LEVEL: 'info', NODE_ENV: 'production', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000' };
    [a, b] = await Promise.all([
      startServer(portA, { ...env, ADMIN_TOKEN, ADMIN_PORT: String(adminPort) }, [adminPort]),
      startServer(portB, env),
    ]);
    adminBase = `http://127.0.0.1:${adminPort}`;
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    if (key) for (const server of [a, b]) assert.ok(!server?.output().includes(key), 'a key appeared in a server log');
    await db?.drop();
  });

  test('variants fetched from A are rendered by B after A publishes; B’s first answers are cache hits with Content-Length', async () => {
    await admin('POST', '/admin/stores', JSON.stringify({ id: SHOP, name: 'Warm on every instance' }));
    key = (await admin('POST', `/admin/stores/${SHOP}/keys`, JSON.stringify({ label: 'warming test' }))).value as string;
    assert.equal((await publish('old')).version, 1);
    const variants = [
      { query: 'format=yml', coding: 'gzip' },
      { query: 'format=xlsx&only_available=true', coding: 'identity' },
      { query: 'format=csv', coding: 'br' },
    ];
    const url = (server: ServerProcess, query: string) => `${server.base}/api/export/latest?key=${key}&${query}`;
    for (const { query, coding } of variants) assert.equal((await raw(url(a, query), coding)).status, 200);

    // A writes what it served within a second, in one batch: wait until the database has all three.
    await untilDemandWritten(db.url, SHOP, (rows) => rows === 3, 'A’s demand in the database');

    assert.equal((await publish('new')).version, 2);
    await until('B to warm version 2', () => b.output().split('\n').some((line) => line.includes('hot variants warmed') && line.includes(`"storeId":"${SHOP}"`) && line.includes('"version":2')));
    const line = b.output().split('\n').find((l) => l.includes('hot variants warmed') && l.includes('"version":2'))!;
    assert.equal(JSON.parse(line).variants, 3);
    // The gzip/br copies follow the render in the background; a HEAD never renders, so its length tells they are there.
    for (const { query, coding } of variants) {
      await until(`${query} (${coding}) cached on B`, async () => (await raw(url(b, query), coding, 'HEAD')).headers['content-length'] !== undefined);
    }
    for (const { query, coding } of variants) {
      const first = await raw(url(b, query), coding);
      assert.equal(first.status, 200);
      assert.equal(first.headers['content-length'], String(first.body.length), `${query} ${coding}: B's first GET is a cache hit`);
      assert.equal(first.headers['content-encoding'], coding === 'identity' ? undefined : coding);
    }
    const csv = await raw(url(b, 'format=csv'), 'identity');
    assert.match(csv.body.toString(), /^new-0,/m);
  });
});
