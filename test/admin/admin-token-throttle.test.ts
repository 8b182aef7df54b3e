/**
 * #20 finding 18: wrong admin tokens are throttled per client and logged in summary; the start
 * warns when ADMIN_HOST is not loopback or the token is weak.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { buildAdminApp } from '../../src/http/admin/admin-app.js';
import { adminExposureWarnings } from '../../src/http/admin/admin-auth.js';
import { createTestDatabase, type TestDatabase } from '../support/dialects.js';
import { ADMIN_TOKEN } from './admin-harness.js';

describe('wrong admin tokens', () => {
  let testDb: TestDatabase;
  let admin: FastifyInstance;
  const logLines: string[] = [];
  let clock = 10 * 60_000;

  before(async () => {
    testDb = await createTestDatabase('sqlite');
    const config = loadConfig({ DATABASE_URL: testDb.url, ADMIN_TOKEN, ADMIN_AUTH_FAIL_LIMIT_PER_MIN: '5', LOG_LEVEL: 'info' });
    const logStream = new Writable({ write(chunk, _encoding, done) { logLines.push(chunk.toString()); done(); } });
    admin = await buildAdminApp({ config, db: testDb.db, logStream, now: () => clock });
    await admin.ready();
  });
  after(async () => {
    await admin.close();
    await testDb.drop();
  });

  const call = (token: string, remoteAddress = '10.0.0.1') =>
    admin.inject({ method: 'GET', url: '/admin/stores', headers: { authorization: `Bearer ${token}` }, remoteAddress });

  test('over the limit a client gets 429 with Retry-After, even with the right token; other clients are not affected; the next minute it may try again', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await call(`wrong-token-${i}-0123456789abcdef`)).statusCode, 401);
    const throttled = await call('wrong-token-again-0123456789abcdef');
    assert.equal(throttled.statusCode, 429);
    assert.equal(throttled.json().code, 'rate_limited');
    assert.ok(Number(throttled.headers['retry-after']) >= 1);
    assert.equal((await call(ADMIN_TOKEN)).statusCode, 429, 'a guess that happens to be right is not told apart');
    assert.equal((await call(ADMIN_TOKEN, '10.0.0.2')).statusCode, 200, 'another client is served');
    clock += 60_000;
    assert.equal((await call(ADMIN_TOKEN)).statusCode, 200, 'a new minute, a new count');
  });

  test('the log has one line per client and minute, and one summary with the count, never a line per guess', async () => {
    const warnings = logLines.filter((line) => /admin token/.test(line));
    assert.equal(warnings.filter((line) => /missing or wrong/.test(line)).length, 1);
    const summaries = warnings.filter((line) => /repeatedly/.test(line)).map((line) => JSON.parse(line));
    assert.equal(summaries.length, 1);
    assert.equal(summaries[0].wrongTokens, 7); // five wrong, then two refused by the throttle
    assert.equal(summaries[0].client, '10.0.0.1');
  });

  test('start warnings: ADMIN_HOST not loopback, a token under 32 characters or one character repeated', () => {
    assert.deepEqual(adminExposureWarnings('127.0.0.1', ADMIN_TOKEN), []);
    assert.deepEqual(adminExposureWarnings('::1', ADMIN_TOKEN), []);
    assert.match(adminExposureWarnings('0.0.0.0', ADMIN_TOKEN).join(), /ADMIN_HOST is 0\.0\.0\.0, not loopback/);
    assert.match(adminExposureWarnings('localhost', 'short-token-12345').join(), /ADMIN_TOKEN is weak/);
    assert.match(adminExposureWarnings('localhost', 'a'.repeat(40)).join(), /ADMIN_TOKEN is weak/);
  });
});
