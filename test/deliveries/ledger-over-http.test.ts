import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after, describe, test } from 'node:test';
import { revokeKey } from '../../src/domain/keys.js';
import { ALL_LOG_LINES, createTestApp, ISSUED_KEYS, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';
import { DIALECTS } from '../support/dialects.js';

const AGENTS = {
  curl: 'curl/8.5.0',
  yandex: 'Mozilla/5.0 (compatible; YandexMarket/2.0; +http://yandex.com/bots)',
  google: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  '1c': '1C+Enterprise/8.3',
  browser: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
};

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function fetchOver(port: number, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Reads the first chunk of the body, then drops the connection: a fetcher that cuts the download. */
function cutOver(port: number, path: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', () => undefined);
    req.on('close', () => resolve());
    req.setTimeout(30_000, () => reject(new Error('no body')));
    req.end();
  });
}

const items = (count: number, price = 100) =>
  Array.from({ length: count }, (_, i) => ({ offer_id: `o${i}`, name: `Item number ${i} with a longer name`, price, quantity: 3, url: `https://shop.example/items/${i}` }));

for (const dialect of DIALECTS) {
  describe(`the delivery ledger over HTTP (${dialect})`, () => {
    let t: TestApp;
    let clockMs = Date.now();
    after(async () => t?.close());

    test('records each export by user agent, never a key, and pages newest first', async () => {
      t = await createTestApp(dialect, {}, { now: () => clockMs });
      const key = await storeWithKey(t.db, 'ledger-shop');
      const revoked = await storeWithKey(t.db, 'ledger-other');
      await publishJson(t.db, 'ledger-shop', items(3));
      await publishJson(t.db, 'ledger-other', items(3));
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (t.app.server.address() as { port: number }).port;

      for (const [, agent] of Object.entries(AGENTS)) {
        const answer = await fetchOver(port, `/api/export/latest?key=${key}&format=json`, { 'user-agent': agent });
        assert.equal(answer.status, 200);
      }
      const first = await fetchOver(port, `/WebApi/CampaignDataLatestGet/${key}`, { 'user-agent': 'Wget/1.21.4' });
      const revalidated = await fetchOver(port, `/WebApi/CampaignDataLatestGet/${key}`, { 'user-agent': 'Wget/1.21.4', 'if-none-match': String(first.headers.etag) });
      assert.equal(revalidated.status, 304);
      const refused = await fetchOver(port, `/api/export/latest?key=${key}&format=nope`, { 'user-agent': 'python-requests/2.32' });
      assert.equal(refused.status, 400);

      // A revoked key's downloads are refused before the ledger hears of them.
      const [otherKey] = await t.db.keys.list('ledger-other');
      await revokeKey(t.db, otherKey.id);
      assert.equal((await fetchOver(port, `/api/export/latest?key=${revoked}`, { 'user-agent': 'curl/8' })).status, 401);

      await t.app.deliveries.flush();
      const page = await fetchOver(port, '/api/me/deliveries?limit=100', { 'x-api-key': key });
      assert.equal(page.status, 200);
      const { deliveries, next_before } = JSON.parse(page.body) as { deliveries: Record<string, unknown>[]; next_before: string | null };
      assert.equal(next_before, null);
      assert.equal(deliveries.length, 8);
      // Newest first: the 400, then the 304, then the legacy CSV, then the JSON downloads in reverse.
      assert.deepEqual(deliveries.map((d) => d.status), [400, 304, 200, 200, 200, 200, 200, 200]);
      assert.deepEqual(deliveries.map((d) => d.client_class), ['python-requests', 'wget', 'wget', 'browser', '1c', 'google', 'yandex', 'curl']);
      const json = deliveries[7];
      assert.equal(json.format, 'json');
      assert.equal(json.version, 1);
      assert.equal(json.address, 'prices');
      assert.equal(json.finished, true);
      assert.equal(json.client_address, '127.0.0.1');
      assert.ok((json.bytes_sent as number) > 200);
      assert.equal(deliveries[1].version, 1);
      assert.equal(deliveries[0].format, null, 'a request refused at its parameters has no format');

      const otherPage = JSON.parse((await fetchOver(port, '/api/me/deliveries', { 'x-api-key': key })).body) as { deliveries: { key_id: string }[] };
      assert.ok(otherPage.deliveries.every((d) => d.key_id !== otherKey.id), 'the revoked key was not recorded');
      const raw = (await t.db.deliveries.ledger.page('ledger-other', 100, null));
      assert.equal(raw.length, 0, 'nothing recorded for the revoked key');

      // Pages of 3 with next_before reach every record once.
      const seen: unknown[] = [];
      let before: string | null = '';
      while (before !== null) {
        const answer = await fetchOver(port, `/api/me/deliveries?limit=3${before ? `&before=${encodeURIComponent(before)}` : ''}`, { 'x-api-key': key });
        const body = JSON.parse(answer.body) as { deliveries: { id: number }[]; next_before: string | null };
        seen.push(...body.deliveries.map((d) => d.id));
        before = body.next_before;
      }
      assert.deepEqual(seen, deliveries.map((d) => d.id));

      const stored = JSON.stringify(await t.db.deliveries.ledger.page('ledger-shop', 100, null));
      for (const issued of ISSUED_KEYS) assert.ok(!stored.includes(issued) && !stored.includes(issued.slice(4)), 'no key in a ledger row');
      for (const line of ALL_LOG_LINES) assert.ok(!line.includes(key.slice(4)), 'no key in a log line');
    });

    test('a bad limit or before answers 400 problem+json naming it', async () => {
      const key = await storeWithKey(t.db, 'ledger-params');
      const port = (t.app.server.address() as { port: number }).port;
      for (const query of ['limit=0', 'limit=1001', 'limit=x', 'before=yesterday', 'before=2026-11-22T07:00:00Z~x']) {
        const answer = await fetchOver(port, `/api/me/deliveries?${query}`, { 'x-api-key': key });
        assert.equal(answer.status, 400, query);
        assert.match(String(answer.headers['content-type']), /application\/problem\+json/);
        const problem = JSON.parse(answer.body) as { code: string; detail: string };
        assert.equal(problem.code, 'invalid_parameter');
        assert.match(problem.detail, query.startsWith('limit') ? /limit/ : /before/);
      }
      assert.equal((await fetchOver(port, '/api/me/deliveries', {})).status, 401);
    });

    test('a download cut by the fetcher is recorded as unfinished', async () => {
      const key = await storeWithKey(t.db, 'ledger-cut');
      await publishJson(t.db, 'ledger-cut', items(20_000));
      const port = (t.app.server.address() as { port: number }).port;
      await cutOver(port, `/api/export/latest?key=${key}&format=xml`, { 'user-agent': 'YandexMarket/2.0' });
      // The record is queued when the server side of the connection closes.
      let rows: Awaited<ReturnType<typeof t.db.deliveries.ledger.page>> = [];
      for (let i = 0; i < 200 && rows.length === 0; i++) {
        await t.app.deliveries.flush();
        rows = await t.db.deliveries.ledger.page('ledger-cut', 10, null);
        if (rows.length === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(rows.length, 1);
      assert.equal(rows[0].status, 200);
      assert.equal(rows[0].finished, false);
      assert.equal(rows[0].client_class, 'yandex');
    });

    test('consumers: last version, fetches in 24 h, and behind once STALE_AFTER_MIN passes (moved clock)', async () => {
      const key = await storeWithKey(t.db, 'ledger-behind');
      await publishJson(t.db, 'ledger-behind', items(2));
      const port = (t.app.server.address() as { port: number }).port;
      await fetchOver(port, `/api/export/latest?key=${key}`, { 'user-agent': 'curl/8.5.0' });
      await fetchOver(port, `/api/export/latest?key=${key}`, { 'user-agent': 'curl/8.5.0' });
      await t.app.deliveries.flush();
      const me = async () => JSON.parse((await fetchOver(port, '/api/me', { 'x-api-key': key })).body) as { consumers: Record<string, unknown>[] };

      let consumers = (await me()).consumers;
      assert.equal(consumers.length, 1);
      assert.deepEqual({ ...consumers[0], last_fetch_at: undefined }, {
        client_class: 'curl', client_address: '127.0.0.1', last_version: 1, last_status: 200, fetches_24h: 2, behind: false, last_fetch_at: undefined,
      });

      await publishJson(t.db, 'ledger-behind', items(2, 200));
      assert.equal((await me()).consumers[0].behind, false, 'just published: not behind yet');
      clockMs += 119 * 60_000;
      assert.equal((await me()).consumers[0].behind, false, 'within STALE_AFTER_MIN (120)');
      clockMs += 2 * 60_000;
      consumers = (await me()).consumers;
      assert.equal(consumers[0].behind, true, 'past STALE_AFTER_MIN');
      assert.equal(consumers[0].fetches_24h, 2);

      await fetchOver(port, `/api/export/latest?key=${key}`, { 'user-agent': 'curl/8.5.0' });
      await t.app.deliveries.flush();
      consumers = (await me()).consumers;
      assert.equal(consumers[0].behind, false, 'caught up');
      assert.equal(consumers[0].last_version, 2);
    });

    test('a seldom consumer\'s answers share a row, and an answer past LEDGER_DAYS is not listed though its row is kept', async () => {
      const key = await storeWithKey(t.db, 'ledger-seldom');
      await publishJson(t.db, 'ledger-seldom', items(2));
      const port = (t.app.server.address() as { port: number }).port;
      const first = clockMs;
      for (let i = 0; i < 3; i++) {
        // A marketplace revalidating every 15 minutes (moved clock).
        if (i > 0) clockMs += 15 * 60_000;
        await fetchOver(port, `/api/export/latest?key=${key}&format=yml`, { 'user-agent': 'YandexMarket/2.0' });
        await t.app.deliveries.flush();
      }
      const page = async () => JSON.parse((await fetchOver(port, '/api/me/deliveries', { 'x-api-key': key })).body) as { deliveries: { id: number; at: string }[]; next_before: string | null };
      let { deliveries } = await page();
      assert.equal(deliveries.length, 3);
      assert.equal(new Set(deliveries.map((d) => Math.floor(d.id / 1024))).size, 1, 'one row: the run continued by the later batches');

      clockMs = first + 30 * 86_400_000 + 60_000;
      ({ deliveries } = await page());
      assert.deepEqual(deliveries.map((d) => Date.parse(d.at) - first), [30 * 60_000, 15 * 60_000], 'the first answer is past the 30 days');
    });
  });
}
