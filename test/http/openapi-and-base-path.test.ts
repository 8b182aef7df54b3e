import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createTestApp, findKeyLeaks, get, publishJson, storeWithKey, type TestApp } from '../support/test-app.js';

const sample = JSON.parse(readFileSync(new URL('../fixtures/legacy-sample.json', import.meta.url), 'utf8'));
const legacyCsv = readFileSync(new URL('../fixtures/legacy-sample.csv', import.meta.url));

describe('/openapi.json describes the four addresses', () => {
  let t: TestApp;
  before(async () => { t = await createTestApp('sqlite'); });
  after(async () => { await t.close(); });

  test('every address with every parameter, response and error, and the X-Api-Key and Basic schemes', async () => {
    const response = await get(t.app, '/openapi.json');
    assert.equal(response.statusCode, 200);
    const doc = JSON.parse(response.body);
    assert.deepEqual(doc.components.securitySchemes.ApiKey, { type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    assert.equal(doc.components.securitySchemes.Basic.type, 'http');
    assert.equal(doc.components.securitySchemes.Basic.scheme, 'basic');
    const paths = Object.keys(doc.paths).sort();
    assert.deepEqual(paths, ['/WebApi/CampaignDataLatestGet/{api_key}', '/WebApi/SummaryExportLatestGet/{api_key}', '/api/export/changes', '/api/export/check', '/api/export/latest', '/api/me', '/api/me/deliveries']);
    for (const path of ['/WebApi/CampaignDataLatestGet/{api_key}', '/api/export/latest', '/api/export/check', '/api/export/changes']) {
      const op = doc.paths[path].get;
      const names = op.parameters.map((p: { name: string }) => p.name);
      for (const name of ['format', 'only_available', 'profile_id']) assert.ok(names.includes(name), `${path} ${name}`);
      const statuses = path === '/api/export/check' ? ['200', '400', '401', '403', '404', '405', '429', '500', '503'] : ['200', '304', '400', '401', '403', '404', '405', '429', '500', '503'];
      for (const status of statuses) assert.ok(op.responses[status], `${path} ${status}`);
      assert.ok(op.responses['401'].content['application/problem+json']);
      // CONTRACT §15: a key outside its scopes.
      assert.match(JSON.stringify(op.responses['403']), /key_scope/);
    }
    assert.deepEqual(doc.paths['/api/me'].get.security, [{ ApiKey: [] }, { Basic: [] }]);
    // CONTRACT §11: `since`, required, and its 410.
    const changes = doc.paths['/api/export/changes'].get;
    assert.ok(changes.parameters.some((p: { name: string; required?: boolean }) => p.name === 'since' && p.required));
    assert.match(JSON.stringify(changes.responses['410']), /since_too_old/);
    // Address 4, the feed check and the changes feed: the key in `key=`, or as the Basic password.
    for (const path of ['/api/export/latest', '/api/export/check', '/api/export/changes']) assert.deepEqual(doc.paths[path].get.security, [{ Basic: [] }, {}]);
    assert.ok(doc.paths['/api/me'].get.responses['403'], '/api/me answers 403 key_scope');
    assert.ok(!JSON.stringify(doc).includes('/admin'));
  });

  test('/docs is served from the package', async () => {
    const page = await get(t.app, '/docs/');
    assert.equal(page.statusCode, 200);
    assert.ok(!/https?:\/\/(cdn|unpkg|jsdelivr)/.test(page.body));
    const bundle = await get(t.app, '/docs/static/swagger-ui-bundle.js');
    assert.equal(bundle.statusCode, 200);
  });
});

describe('BASE_PATH and PUBLIC_URL run the same interface under another base address', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await createTestApp('sqlite', { BASE_PATH: '/prices/', PUBLIC_URL: 'https://test.example/prices' });
    key = await storeWithKey(t.db, 'demo-shop', 'Demo Shop');
    await publishJson(t.db, 'demo-shop', sample);
  });
  after(async () => {
    await t.close();
    assert.deepEqual(findKeyLeaks(), []);
  });

  test('the legacy address answers under the prefix, byte for byte', async () => {
    const response = await get(t.app, `/prices/WebApi/CampaignDataLatestGet/${key}`);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.rawPayload, legacyCsv);
    assert.equal((await get(t.app, `/WebApi/CampaignDataLatestGet/${key}`)).statusCode, 404);
  });

  test('/openapi.json lists PUBLIC_URL under servers; /api/me builds addresses on it', async () => {
    const doc = JSON.parse((await get(t.app, '/prices/openapi.json')).body);
    assert.deepEqual(doc.servers, [{ url: 'https://test.example/prices' }]);
    const me = JSON.parse((await get(t.app, '/prices/api/me', { 'x-api-key': key })).body);
    assert.equal(me.exports.export_latest, 'https://test.example/prices/api/export/latest?key={api_key}');
  });
});
