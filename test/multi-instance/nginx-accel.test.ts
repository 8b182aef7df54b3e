import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startNginxFront, nginxInstalled, type NginxFront } from '../support/nginx-front.js';
import { until } from '../support/until.js';
import { freePort, startServer, type ServerProcess } from './processes.js';
import { adminCaller } from '../support/admin-client.js';

/**
 * Issue #18, goal 4: ACCEL_REDIRECT_PREFIX with a real nginx (Debian nginx-light) in front, on
 * the configuration docs/running-several-instances.md documents. The instance checks the key,
 * scopes and conditions, then hands a cached file to nginx's `internal` location over CACHE_DIR;
 * nginx sends the same bytes under the instance's validators. Without the mode, the same answers.
 */
const skip = nginxInstalled() ? false : 'needs nginx (Debian nginx-light, /usr/sbin/nginx)';
const ADMIN_TOKEN = `accel-${randomBytes(12).toString('hex')}`;
const SHOP = `accel-${randomBytes(4).toString('hex')}`;
const PREFIX = '/_cache/';

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/** The response's headers and bytes as sent (fetch would decode the content coding). */
function raw(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    }).on('error', reject).end();
  });
}

/** The headers a client relies on, which must be the same through nginx's hand-off as from the instance itself. */
const KEPT = ['content-type', 'content-disposition', 'content-encoding', 'content-length', 'etag', 'last-modified', 'cache-control', 'vary', 'x-content-type-options', 'referrer-policy', 'ratelimit-policy', 'accept-ranges'];

describe('nginx sends cached files through X-Accel-Redirect after the instance checked the key (ACCEL_REDIRECT_PREFIX)', { skip }, () => {
  let dir: string;
  /** The instance in the mode, behind nginx; and one without it (the same database), behind another nginx. */
  let accel: ServerProcess;
  let plain: ServerProcess;
  let front: NginxFront;
  let plainFront: NginxFront;
  let adminBase: string;
  const keys: string[] = [];
  const keyIds: string[] = [];

  const admin = adminCaller(() => adminBase, ADMIN_TOKEN);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pe-accel-'));
    const cacheDir = join(dir, 'cache');
    const [port, plainPort, adminPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const env = { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, LOG_LEVEL: 'info', NODE_ENV: 'production', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000' };
    accel = await startServer(port, { ...env, ADMIN_TOKEN, ADMIN_PORT: String(adminPort), CACHE_DIR: cacheDir, ACCEL_REDIRECT_PREFIX: PREFIX }, [adminPort]);
    plain = await startServer(plainPort, { ...env, CACHE_DIR: join(dir, 'plain-cache') });
    adminBase = `http://127.0.0.1:${adminPort}`;
    front = await startNginxFront(join(dir, 'nginx'), { upstreams: [`127.0.0.1:${port}`], accel: { prefix: PREFIX, cacheDir } });
    plainFront = await startNginxFront(join(dir, 'nginx-plain'), { upstreams: [`127.0.0.1:${plainPort}`] });

    await admin('POST', '/admin/stores', JSON.stringify({ id: SHOP, name: 'Accelerated' }));
    for (const body of [{ label: 'all' }, { label: 'json only', formats: ['json'] }, { label: 'doomed' }]) {
      const issued = await admin('POST', `/admin/stores/${SHOP}/keys`, JSON.stringify(body)) as { id: string; value: string };
      keys.push(issued.value);
      keyIds.push(issued.id);
    }
    const items = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ offer_id: `sku-${i}`, name: `Товар ${i}`, price: (10 + i / 100).toFixed(2), quantity: i % 3, category: `G${i % 5}` }));
    assert.equal((await admin('POST', `/admin/stores/${SHOP}/price-lists`, items.join('\n') + '\n', 'application/x-ndjson')).version, 1);
  });

  after(async () => {
    await Promise.all([front?.stop(), plainFront?.stop()]);
    await Promise.all([accel?.stop(), plain?.stop()]);
    for (const key of keys) {
      assert.ok(!front.accessLog().includes(key) && !plainFront.accessLog().includes(key), 'a key appeared in nginx’s access log');
      assert.ok(!front.errorLog().includes(key) && !plainFront.errorLog().includes(key), 'a key appeared in nginx’s error log');
      assert.ok(!accel.output().includes(key) && !plain.output().includes(key), 'a key appeared in a server log');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** GETs until the variant is a cache hit at both instances (the render and its gzip/br copy are done). */
  async function cached(path: string, coding: string): Promise<void> {
    const headers: Record<string, string> = coding === 'identity' ? {} : { 'accept-encoding': coding };
    await until(`${path} (${coding}) cached`, async () => {
      const direct = await raw(`${accel.base}${path}`, headers);
      return direct.headers['x-accel-redirect'] !== undefined;
    });
    await until(`${path} (${coding}) cached without the mode`, async () => (await raw(`${plain.base}${path}`, headers)).headers['content-length'] !== undefined);
  }

  test('a cached variant: the same bytes, ETag, Content-Length and headers as without the mode; gzip and br too', async () => {
    const variants = [
      { path: `/api/export/latest?key=${keys[0]}&format=csv`, coding: 'identity' },
      { path: `/api/export/latest?key=${keys[0]}&format=json`, coding: 'gzip' },
      { path: `/WebApi/CampaignDataLatestGet/${keys[0]}?format=yml`, coding: 'br' },
      { path: `/api/export/latest?key=${keys[0]}&format=xlsx`, coding: 'identity' },
    ];
    for (const { path, coding } of variants) {
      await cached(path, coding);
      const headers: Record<string, string> = coding === 'identity' ? {} : { 'accept-encoding': coding };
      const direct = await raw(`${accel.base}${path}`, headers);
      // What the instance answers nginx: an empty body, and where the file is; nothing else of the file.
      assert.equal(direct.status, 200);
      assert.equal(direct.body.length, 0);
      const location = direct.headers['x-accel-redirect'] as string;
      assert.match(location, /^\/_cache\/[0-9]+-[0-9a-f]{8}\/v1-[A-Za-z0-9_-]+-\d+(\.gz|\.br)?$/);
      assert.ok(!location.includes(SHOP) && !location.includes(keys[0]), 'the file name tells neither the store nor the key');

      const through = await raw(`${front.base}${path}`, headers);
      const reference = await raw(`${plainFront.base}${path}`, headers);
      assert.equal(through.status, 200);
      assert.equal(reference.status, 200);
      assert.equal(through.headers['x-accel-redirect'], undefined, 'nginx never passes the internal location on');
      assert.ok(through.body.equals(reference.body), `${path} (${coding}): the same bytes`);
      for (const name of KEPT) assert.equal(through.headers[name], reference.headers[name], `${path} (${coding}): ${name}`);
      assert.equal(through.headers['content-length'], String(through.body.length));
      assert.equal(through.headers['content-encoding'], coding === 'identity' ? undefined : coding);
    }
  });

  test('byte ranges are answered by nginx from the file, If-Range by the instance’s ETag', async () => {
    const path = `/api/export/latest?key=${keys[0]}&format=csv`;
    await cached(path, 'identity');
    const whole = await raw(`${front.base}${path}`);
    const etag = whole.headers.etag as string;
    const part = await raw(`${front.base}${path}`, { range: 'bytes=100-1099' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 100-1099/${whole.body.length}`);
    assert.equal(part.headers.etag, etag);
    assert.ok(part.body.equals(whole.body.subarray(100, 1100)));
    assert.equal((await raw(`${front.base}${path}`, { range: 'bytes=100-1099', 'if-range': etag })).status, 206);
    assert.equal((await raw(`${front.base}${path}`, { range: 'bytes=100-1099', 'if-range': '"v0-stale"' })).status, 200);
    // Revalidations never reach the file: the instance answers 304 itself.
    const revalidated = await raw(`${front.base}${path}`, { 'if-none-match': etag });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.body.length, 0);
  });

  test('a wrong, out-of-scope or revoked key is refused by the instance; nginx never sends the file', async () => {
    const csv = (key: string) => `${front.base}/api/export/latest?key=${key}&format=csv`;
    await cached(`/api/export/latest?key=${keys[2]}&format=csv`, 'identity');
    const wrong = await raw(csv(`pe_${'0'.repeat(40)}`));
    assert.equal(wrong.status, 401);
    assert.equal(wrong.headers['content-type'], 'application/problem+json');
    const scoped = await raw(csv(keys[1]));
    assert.equal(scoped.status, 403);
    assert.equal(JSON.parse(scoped.body.toString()).code, 'key_scope');

    assert.equal((await raw(csv(keys[2]))).status, 200);
    await admin('POST', `/admin/keys/${keyIds[2]}/revoke`);
    const revoked = await raw(csv(keys[2]));
    assert.equal(revoked.status, 401);
    assert.equal(JSON.parse(revoked.body.toString()).code, 'revoked_key');
  });

  test('the internal location and the cache directory are not reachable from outside', async () => {
    const path = `/api/export/latest?key=${keys[0]}&format=csv`;
    await cached(path, 'identity');
    const location = (await raw(`${accel.base}${path}`)).headers['x-accel-redirect'] as string;
    for (const probe of [location, PREFIX, `${location}?key=${keys[0]}`, location.replace('/_cache/', '/_CACHE/')]) {
      const answer = await raw(`${front.base}${probe}`);
      assert.ok(answer.status === 404 || answer.status === 401, `${probe}: ${answer.status}`);
      assert.ok(!answer.body.toString().includes('sku-1,'), `${probe}: no price list`);
    }
    assert.equal((await raw(`${front.base}${location}`)).status, 404);
  });

  test('HEAD and an uncached variant are answered by the instance itself, as without the mode', async () => {
    const path = `/api/export/latest?key=${keys[0]}&format=tsv&only_available=true`;
    const first = await raw(`${front.base}${path}`);
    const reference = await raw(`${plainFront.base}${path}`);
    assert.equal(first.status, 200);
    assert.ok(first.body.equals(reference.body));
    const head = await raw(`${front.base}/api/export/latest?key=${keys[0]}&format=csv`, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.ok(Number(head.headers['content-length']) > 0);
  });

  test('nginx’s access log names requests without their keys (legacy paths masked), and the hand-offs happened', async () => {
    // nginx writes a request's line when it is done, before the next on the same connection is read.
    const log = front.accessLog();
    assert.match(log, /"GET \/api\/export\/latest" 200 /);
    assert.match(log, /"GET \/WebApi\/CampaignDataLatestGet\/-" 200 /);
    assert.doesNotMatch(log, /key=/);
    // The requests as asked, not the internal location they were handed to.
    assert.doesNotMatch(log, /"GET \/_cache\/[^"]+-\d+" 200/);
  });
});
