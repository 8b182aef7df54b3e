/**
 * Red-team finding #20.15: an admin address the router cannot take (a bad %-escape, a
 * parameter over its length) was answered by Fastify's own JSON, echoing the address, without
 * the security headers and before the token was checked. Now: the token first (401, and the
 * wrong-token throttle counts it), then the public side's 400 problem+json.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { buildAdminApp } from '../../src/http/admin/admin-app.js';
import { createTestDatabase, type TestDatabase } from '../support/dialects.js';
import { ADMIN_TOKEN } from './admin-harness.js';

const MALFORMED = {
  'a bad %-escape': '/admin/stores/%zz-secret-looking-part',
  'a parameter over its length': `/admin/stores/${'secret-looking-part-'.repeat(100)}`,
};

describe('admin framework errors', () => {
  let testDb: TestDatabase;
  let admin: FastifyInstance;
  const logLines: string[] = [];

  before(async () => {
    testDb = await createTestDatabase('sqlite');
    const config = loadConfig({ DATABASE_URL: testDb.url, ADMIN_TOKEN, ADMIN_AUTH_FAIL_LIMIT_PER_MIN: '3', LOG_LEVEL: 'info' });
    const logStream = new Writable({ write(chunk, _encoding, done) { logLines.push(chunk.toString()); done(); } });
    admin = await buildAdminApp({ config, db: testDb.db, logStream, now: () => 5 * 60_000 });
    await admin.ready();
  });
  after(async () => {
    await admin.close();
    await testDb.drop();
  });

  const call = (url: string, token: string | null, remoteAddress: string) =>
    admin.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {}, remoteAddress });

  const assertProblem = (response: Awaited<ReturnType<typeof call>>, status: number, code: string) => {
    assert.equal(response.statusCode, status, response.body);
    assert.equal(response.headers['content-type'], 'application/problem+json');
    assert.equal(response.headers['x-content-type-options'], 'nosniff');
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
    assert.equal(response.json().code, code);
    assert.doesNotMatch(response.body, /secret-looking-part|\/admin\/stores/, 'the address is never echoed');
  };

  for (const [what, url] of Object.entries(MALFORMED)) {
    test(`${what}: without the token 401 (Bearer), with it 400 invalid_parameter, both problem+json with the security headers`, async () => {
      const refused = await call(url, null, '10.1.0.1');
      assertProblem(refused, 401, 'unauthorized');
      assert.equal(refused.headers['www-authenticate'], 'Bearer realm="price-export-admin"');
      assertProblem(await call(url, ADMIN_TOKEN, '10.1.0.2'), 400, 'invalid_parameter');
    });
  }

  test('wrong tokens on malformed addresses count against the client like any other', async () => {
    for (let i = 0; i < 3; i++) assertProblem(await call(MALFORMED['a bad %-escape'], `wrong-${i}`, '10.1.0.3'), 401, 'unauthorized');
    const throttled = await call(MALFORMED['a bad %-escape'], ADMIN_TOKEN, '10.1.0.3');
    assertProblem(throttled, 429, 'rate_limited');
    assert.ok(Number(throttled.headers['retry-after']) >= 1);
  });

  test('no log line quotes the address', () => {
    assert.ok(logLines.length > 0);
    for (const line of logLines) assert.doesNotMatch(line, /secret-looking-part/);
  });
});
