/**
 * #20 finding 20: /api/me's address templates never come from an arbitrary Host header in
 * production. PUBLIC_URL wins; else only a Host listed in ALLOWED_HOSTS; else (production)
 * templates relative to the service root.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { createTestApp, get, storeWithKey } from '../support/test-app.js';

async function templates(env: Record<string, string>, host: string): Promise<string> {
  const t = await createTestApp('sqlite', env);
  try {
    const key = await storeWithKey(t.db, 'hosts');
    const response = await get(t.app, `${env.BASE_PATH ?? ''}/api/me`, { 'x-api-key': key, host });
    assert.equal(response.statusCode, 200, response.body);
    return response.json().exports.export_latest;
  } finally {
    await t.close();
  }
}

describe('/api/me templates and the Host header', () => {
  test('production without PUBLIC_URL or ALLOWED_HOSTS: an attacker\'s Host is not used; the template is relative', async () => {
    assert.equal(await templates({ NODE_ENV: 'production', BASE_PATH: '/prices' }, 'evil.example'), '/prices/api/export/latest?key={api_key}');
  });

  test('ALLOWED_HOSTS: a listed Host (any case) is used, any other is not', async () => {
    const env = { NODE_ENV: 'production', ALLOWED_HOSTS: 'prices.shop.example, localhost:8080' };
    assert.equal(await templates(env, 'Prices.Shop.Example'), 'http://prices.shop.example/api/export/latest?key={api_key}');
    assert.equal(await templates(env, 'localhost:8080'), 'http://localhost:8080/api/export/latest?key={api_key}');
    assert.equal(await templates(env, 'evil.example'), '/api/export/latest?key={api_key}');
    assert.equal(await templates({ ALLOWED_HOSTS: 'prices.shop.example' }, 'evil.example'), '/api/export/latest?key={api_key}', 'the list counts outside production too');
  });

  test('PUBLIC_URL wins over any Host; outside production with no list the Host is used, as before', async () => {
    assert.equal(await templates({ NODE_ENV: 'production', PUBLIC_URL: 'https://p.example' }, 'evil.example'), 'https://p.example/api/export/latest?key={api_key}');
    assert.equal(await templates({}, 'dev.local:8080'), 'http://dev.local:8080/api/export/latest?key={api_key}');
  });

  test('ALLOWED_HOSTS must list host names', () => {
    assert.throws(() => loadConfig({ ALLOWED_HOSTS: 'ok.example, http://bad/' }), /ALLOWED_HOSTS must list host or host:port names/);
  });
});
