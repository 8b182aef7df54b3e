/**
 * /readyz follows PostgreSQL: the service reaches the database through a TCP proxy of ours
 * (child-service.ts), which cuts it (refused at once) or blackholes it (a partition: nothing
 * answers), and restores it. Readiness must turn 503 while it is away and 200 again by itself.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { buildPublicApp } from '../../src/composition.js';
import { openDatabase } from '../../src/store/factory.js';
import type { Database } from '../../src/store/types.js';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '../support/dialects.js';
import { collectingLogStream, get } from '../support/test-app.js';
import { proxiedDatabase, sleep, type TcpProxy } from './child-service.js';

const PG_URL = process.env.PRICE_EXPORT_TEST_PG_URL;

describe('/readyz during a PostgreSQL outage (behind a TCP proxy)', { skip: PG_URL ? false : 'PRICE_EXPORT_TEST_PG_URL is not set: the PostgreSQL outage is not tested (npm test sets it when PostgreSQL answers)' }, () => {
  let testDb: TestDatabase;
  let proxy: TcpProxy;
  let db: Database;
  let app: FastifyInstance;

  /** Asks /readyz until it answers `status` (each answer comes within the probe's own bound), for at most `ms`. */
  async function readyzBecomes(status: number, ms: number): Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }> {
    const deadline = Date.now() + ms;
    for (;;) {
      const answer = await get(app, '/readyz');
      if (answer.statusCode === status || Date.now() > deadline) return answer;
      await sleep(100);
    }
  }

  before(async () => {
    testDb = await createTestDatabase('postgres');
    let viaProxy: string;
    ({ proxy, url: viaProxy } = await proxiedDatabase(testDb.url));
    db = await openDatabase(viaProxy);
    app = await buildPublicApp({ config: loadConfig({ DATABASE_URL: viaProxy, LOG_LEVEL: 'info' }), db, logStream: collectingLogStream([]) });
    await app.ready();
  });
  after(async () => {
    await app?.close();
    await db?.close();
    await proxy?.close();
    await testDb?.drop();
  });

  test('200, then 503 with Retry-After while the database is cut, then 200 by itself once it is back', async () => {
    assert.equal((await get(app, '/readyz')).statusCode, 200);
    await proxy.cut();
    const down = await readyzBecomes(503, 10_000);
    assert.equal(down.statusCode, 503, down.body);
    assert.equal(down.headers['retry-after'], '5');
    assert.equal(down.headers['content-type'], 'application/problem+json');
    assert.match(JSON.parse(down.body).detail, /database does not answer/);
    // Nothing of the address reaches the probe.
    assert.doesNotMatch(down.body, new RegExp(`127\\.0\\.0\\.1|${proxy.port}|ECONNREFUSED`));
    // Liveness does not depend on the database.
    assert.equal((await get(app, '/healthz')).statusCode, 200);
    await proxy.restore();
    assert.equal((await readyzBecomes(200, 15_000)).statusCode, 200);
  });

  test('a partition (nothing answers) is 503, not a hung probe, and 200 again once it heals', async () => {
    proxy.blackhole();
    try {
      const answer = await get(app, '/readyz');
      assert.equal(answer.statusCode, 503, answer.body);
    } finally {
      await proxy.restore();
    }
    assert.equal((await readyzBecomes(200, 15_000)).statusCode, 200);
  });
});
