import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/config.js';
import { buildAdminApp } from '../../src/http/admin/admin-app.js';
import { warmingOf } from '../../src/http/app.js';
import { buildPublicApp } from '../../src/composition.js';
import { listenForMetrics } from '../../src/http/operations/metrics-endpoint.js';
import { PrometheusMetrics } from '../../src/metrics/prometheus.js';
import { DIALECTS, createTestDatabase, type TestDatabase } from '../support/dialects.js';
import { parsePrometheusText, sampleValue, type MetricFamily } from '../support/prometheus-text.js';
import { ALL_LOG_LINES, collectingLogStream, findKeyLeaks, get, SECRETS, SEEN_RESPONSES, storeWithKey } from '../support/test-app.js';

const ADMIN_TOKEN = 'metrics-admin-token-0123456789abcdef';
SECRETS.push(ADMIN_TOKEN);
const AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };
const STORE = 'metrics-shop-7x';
const ITEMS = (price: number) => [{ offer_id: 'M1', name: 'Metered', price }, { offer_id: 'M2', name: 'Counted', price: price + 1 }].map((i) => JSON.stringify(i)).join('\n');
const EXPORTS = '/api/export/latest';

for (const dialect of DIALECTS) {
  describe(`metrics (${dialect})`, () => {
    let testDb: TestDatabase;
    let publicApp: FastifyInstance;
    let admin: FastifyInstance;
    let key: string;
    const logLines: string[] = [];

    const scrape = async (): Promise<Map<string, MetricFamily>> => {
      const response = await get(admin, '/metrics', AUTH);
      assert.equal(response.statusCode, 200, response.body);
      assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      return parsePrometheusText(response.body);
    };
    const publish = (body: string, type = 'application/x-ndjson') =>
      admin.inject({ method: 'POST', url: `/admin/stores/${STORE}/price-lists`, headers: { ...AUTH, 'content-type': type }, payload: body });
    const download = (format: string, headers: Record<string, string> = {}) => get(publicApp, `${EXPORTS}?key=${key}&format=${format}`, headers);

    before(async () => {
      testDb = await createTestDatabase(dialect);
      const config = loadConfig({ DATABASE_URL: testDb.url, ADMIN_TOKEN, LOG_LEVEL: 'info', RATE_LIMIT_PER_MIN: '20', AUTH_FAIL_LIMIT_PER_MIN: '2', TRUST_PROXY: '127.0.0.1', CACHE_MAX_MB: '3' });
      const metrics = new PrometheusMetrics();
      publicApp = await buildPublicApp({ config, db: testDb.db, logStream: collectingLogStream(logLines), metrics });
      admin = await buildAdminApp({ config, db: testDb.db, logStream: collectingLogStream(logLines), metrics });
      await publicApp.ready();
      await admin.ready();
      key = await storeWithKey(testDb.db, STORE);
    });
    after(async () => {
      await admin.close();
      await publicApp.close();
      await testDb.drop();
      assert.deepEqual(findKeyLeaks(), []);
    });

    test('/metrics needs the admin token', async () => {
      assert.equal((await get(admin, '/metrics')).statusCode, 401);
      assert.equal((await get(admin, '/metrics', { authorization: 'Bearer not-the-token-at-all' })).statusCode, 401);
      // Not on the public port.
      assert.equal((await get(publicApp, '/metrics')).statusCode, 404);
    });

    test('publications count by verdict, with every verdict present from the start', async () => {
      const before = await scrape();
      for (const verdict of ['published', 'refused', 'held', 'quarantined']) {
        assert.equal(sampleValue(before, 'price_export_publication_duration_seconds', { verdict }), 0, verdict);
      }
      assert.equal((await publish(ITEMS(10))).statusCode, 201);
      assert.equal((await publish('not json at all', 'application/json')).statusCode, 422);
      const after = await scrape();
      assert.equal(sampleValue(after, 'price_export_publication_duration_seconds', { verdict: 'published' }), 1);
      assert.equal(sampleValue(after, 'price_export_publication_duration_seconds', { verdict: 'refused' }), 1);
      assert.equal(sampleValue(after, 'price_export_publication_duration_seconds', { verdict: 'held' }), 0);
    });

    test('requests by route pattern and status, cache hits, misses and renders by format move with real downloads', async () => {
      const before = await scrape();
      const first = await download('csv');
      assert.equal(first.statusCode, 200);
      assert.equal((await download('csv')).statusCode, 200);
      assert.equal((await download('csv', { 'if-none-match': String(first.headers.etag) })).statusCode, 304);
      assert.equal((await download('xlsx')).statusCode, 200);
      const after = await scrape();
      const moved = (name: string, labels: Record<string, string>) => (sampleValue(after, name, labels) ?? NaN) - (sampleValue(before, name, labels) ?? NaN);

      const requests = 'price_export_http_request_duration_seconds';
      assert.equal(moved(requests, { method: 'GET', route: EXPORTS, status: '200' }), 3);
      assert.equal(moved(requests, { method: 'GET', route: EXPORTS, status: '304' }), 1);
      assert.equal(after.get(requests)!.type, 'HISTOGRAM');
      assert.equal(moved('price_export_render_cache_misses_total', { format: 'csv' }), 1);
      assert.equal(moved('price_export_render_cache_hits_total', { format: 'csv' }), 1);
      assert.equal(moved('price_export_render_cache_misses_total', { format: 'xlsx' }), 1);
      assert.equal(moved('price_export_render_duration_seconds', { format: 'csv' }), 1);
      assert.equal(moved('price_export_render_duration_seconds', { format: 'xlsx' }), 1);
      assert.ok(sampleValue(after, 'price_export_render_cache_bytes')! > 0);
      assert.equal(sampleValue(after, 'price_export_render_cache_max_bytes'), 3 * 1024 * 1024, 'CACHE_MAX_MB');
      assert.equal(sampleValue(after, 'price_export_render_cache_evictions_total'), 0);
      // The default process metrics.
      for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
        assert.ok(after.has(name), name);
      }
      if (dialect === 'postgres') assert.equal(sampleValue(after, 'price_export_database_pool_connections', { state: 'max' }), 10);
    });

    test('rate-limit refusals by kind: a client\'s wrong keys and a store\'s quota', async () => {
      const before = await scrape();
      const wrong = ['pex_wrongwrongwrongwrongwrongwrong0', 'legacy-wrong-key-1', 'legacy-wrong-key-2'];
      const statuses = [];
      for (const wrongKey of wrong) statuses.push((await get(publicApp, `${EXPORTS}?key=${encodeURIComponent(wrongKey)}`, { 'x-forwarded-for': '203.0.113.9' })).statusCode);
      assert.deepEqual(statuses.slice(-1), [429]);
      const busyKey = await storeWithKey(testDb.db, 'busy-shop');
      let refused = 0;
      for (let i = 0; i < 21; i++) if ((await get(publicApp, `/api/me`, { 'x-api-key': busyKey })).statusCode === 429) refused++;
      assert.equal(refused, 1);
      const after = await scrape();
      assert.equal((sampleValue(after, 'price_export_rate_limit_refusals_total', { kind: 'auth-fail' }) ?? 0) - (sampleValue(before, 'price_export_rate_limit_refusals_total', { kind: 'auth-fail' }) ?? 0), 1);
      assert.equal((sampleValue(after, 'price_export_rate_limit_refusals_total', { kind: 'store' }) ?? 0) - (sampleValue(before, 'price_export_rate_limit_refusals_total', { kind: 'store' }) ?? 0), 1);
    });

    test('the warmer\'s lag (publication → cached) is recorded when a new publication is warmed', async () => {
      // The warmer renders the variants asked for lately (issue #16): make one hot, in the database now.
      assert.equal((await download('yml')).statusCode, 200);
      await warmingOf(publicApp).demand.flush();
      assert.equal((await publish(ITEMS(20))).statusCode, 201);
      const deadline = Date.now() + 20_000;
      let lagCount = 0;
      while (lagCount === 0 && Date.now() < deadline) {
        lagCount = sampleValue(await scrape(), 'price_export_warmer_lag_seconds') ?? 0;
        if (lagCount === 0) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(lagCount, 1);
    });

    test('no key, secret, store id or client address in any metric; every label value is bounded', async () => {
      const text = (await get(admin, '/metrics', AUTH)).body;
      for (const secret of [key, ADMIN_TOKEN, STORE, 'busy-shop', '203.0.113.9', '127.0.0.1', 'legacy-wrong-key']) assert.ok(!text.includes(secret), secret);
      const families = parsePrometheusText(text);
      const routes = new Set(families.get('price_export_http_request_duration_seconds_count')!.metrics.map((m) => m.labels?.route));
      assert.ok(routes.has(EXPORTS));
      for (const route of routes) assert.match(String(route), /^(\/[A-Za-z:_/-]*|\(unmatched\))$/);
      // And none in the log lines of this suite.
      for (const line of logLines) for (const secret of [key, ADMIN_TOKEN]) assert.ok(!line.includes(secret));
      assert.ok(ALL_LOG_LINES.length > 0 && SEEN_RESPONSES.length > 0);
    });

    test('METRICS_PORT: /metrics alone, on loopback, without the token', async () => {
      const metrics = new PrometheusMetrics();
      metrics.httpRequest('GET', EXPORTS, 200, 0.002);
      const server = await listenForMetrics(metrics, 0);
      try {
        const { address, port } = server.address() as AddressInfo;
        assert.equal(address, '127.0.0.1');
        const response = await fetch(`http://127.0.0.1:${port}/metrics`);
        assert.equal(response.status, 200);
        const families = parsePrometheusText(await response.text());
        assert.equal(sampleValue(families, 'price_export_http_request_duration_seconds', { route: EXPORTS, status: '200' }), 1);
        assert.equal((await fetch(`http://127.0.0.1:${port}/admin/stores`)).status, 404);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
}
