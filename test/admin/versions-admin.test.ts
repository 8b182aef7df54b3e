/**
 * CONTRACT §10 on the internal API, every dialect: the guard policy, a held publication (202)
 * released, quarantine shown and released, rollback, versions, and bad input answered with
 * problem+json and a precise code, nothing changed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, startAdminHarness, type AdminHarness } from './admin-harness.js';
import { DIALECTS } from '../support/dialects.js';

const AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface Answer { status: number; headers: Record<string, unknown>; text: string; body: any }

const ndjson = (count: number, prices: Record<string, number> = {}) =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ offer_id: `S${i}`, name: `Item ${i}`, price: prices[`S${i}`] ?? 100 })).join('\n');

for (const dialect of DIALECTS) {
  describe(`versions on the internal API (${dialect})`, () => {
    let h: AdminHarness;
    before(async () => { h = await startAdminHarness(dialect); });
    after(async () => h.close());

    const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers: Record<string, string> = AUTH): Promise<Answer> => {
      const response = await h.admin.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
      const type = String(response.headers['content-type'] ?? '');
      return { status: response.statusCode, headers: response.headers, text: response.body, body: /json/.test(type) ? response.json() : null };
    };
    const publish = (storeId: string, body: string, query = '') =>
      call('POST', `/admin/stores/${storeId}/price-lists${query}`, body, { ...AUTH, 'content-type': 'application/x-ndjson' });
    const problem = (answer: Answer, status: number, code: string) => {
      assert.equal(answer.status, status, answer.text);
      assert.equal(answer.headers['content-type'], 'application/problem+json');
      assert.equal(answer.body.code, code);
      return answer.body;
    };

    test('the guard policy: defaults, a partial change, and values out of range refused with every one named', async () => {
      assert.equal((await call('POST', '/admin/stores', { id: 'g', name: 'G' })).status, 201);
      assert.deepEqual((await call('GET', '/admin/stores/g/guard')).body, { max_removed_pct: 20, max_price_drop_pct: 50, max_price_rise_pct: 100, min_items: 1, zero_price: 'hold' });
      assert.deepEqual((await call('PUT', '/admin/stores/g/guard', { min_items: 3, zero_price: 'allow' })).body.min_items, 3);
      const refused = problem(await call('PUT', '/admin/stores/g/guard', { max_removed_pct: -1, max_price_rise_pct: 'lots', zero_price: 'no' }), 422, 'invalid_guard');
      assert.match(refused.detail, /max_removed_pct .*max_price_rise_pct .*zero_price/);
      assert.deepEqual((await call('GET', '/admin/stores/g/guard')).body, { max_removed_pct: 20, max_price_drop_pct: 50, max_price_rise_pct: 100, min_items: 3, zero_price: 'allow' });
      problem(await call('PUT', '/admin/stores/g/guard', { max_items: 3 }), 422, 'invalid_input');
      problem(await call('GET', '/admin/stores/nope/guard'), 404, 'store_not_found');
    });

    test('held (202) → release; quarantine → release; rollback; versions', async () => {
      await call('POST', '/admin/stores', { id: 'v', name: 'V' });
      assert.equal((await publish('v', ndjson(10))).status, 201);
      const held = await publish('v', ndjson(5));
      assert.equal(held.status, 202, held.text);
      assert.deepEqual([held.body.version, held.body.state, held.body.diff.verdict], [2, 'held', 'held']);
      assert.deepEqual(held.body.diff.tripped[0], {
        check: 'removed', count: 5, limit: 20,
        offenders: ['S5', 'S6', 'S7', 'S8', 'S9'].map((offer_id) => ({ offer_id, old_price: '100.00', new_price: null })),
      });
      problem(await call('POST', '/admin/stores/v/versions/1/release'), 409, 'version_not_held');
      problem(await call('POST', '/admin/stores/v/versions/9/release'), 404, 'version_not_found');
      const released = await call('POST', '/admin/stores/v/versions/2/release');
      assert.equal(released.status, 200, released.text);
      assert.deepEqual([released.body.version, released.body.state], [2, 'latest']);

      const quarantined = await publish('v', ndjson(5, { S0: 10 }));
      assert.equal(quarantined.status, 201);
      assert.equal(quarantined.body.diff.verdict, 'published_with_quarantine');
      assert.deepEqual((await call('GET', '/admin/stores/v/quarantine')).body, { count: 1, items: [{ offer_id: 'S0', check: 'price_drop', served_price: '100.00', proposed_price: '10.00' }] });
      problem(await call('POST', '/admin/stores/v/quarantine/release', { offers: ['S1'] }), 409, 'not_quarantined');
      problem(await call('POST', '/admin/stores/v/quarantine/release', {}), 422, 'invalid_input');
      const release = await call('POST', '/admin/stores/v/quarantine/release', { offers: ['S0'] });
      assert.equal(release.status, 201, release.text);
      assert.deepEqual([release.body.version, release.body.diff.price_down], [4, 1]);

      const back = await call('POST', '/admin/stores/v/rollback', { to: 1 });
      assert.equal(back.status, 201, back.text);
      assert.deepEqual([back.body.version, back.body.source, back.body.item_count, back.body.diff.added], [5, 'rollback', 10, 5]);
      problem(await call('POST', '/admin/stores/v/rollback', { to: 5 }), 409, 'version_is_latest');
      problem(await call('POST', '/admin/stores/v/rollback', { to: 77 }), 404, 'version_not_found');
      problem(await call('POST', '/admin/stores/v/rollback', { to: 'x' }), 422, 'invalid_input');
      const versions = (await call('GET', '/admin/stores/v/versions')).body.versions;
      assert.deepEqual(versions.map((v: { version: number; state: string; source: string }) => `${v.version}:${v.state}:${v.source}`), [
        '5:latest:rollback', '4:retained:publish', '3:retained:publish', '2:retained:publish', '1:retained:publish',
      ]);
      assert.equal((await call('GET', '/admin/stores/v/versions/3')).body.diff.verdict, 'published_with_quarantine');
      problem(await call('GET', '/admin/stores/v/versions/30'), 404, 'version_not_found');

      // What the public side serves: the rollback, at once.
      const me = JSON.parse((await h.publicApp.inject({ url: '/api/me', headers: { 'x-api-key': (await call('POST', '/admin/stores/v/keys')).body.value } })).body);
      assert.equal(me.price_list.version, 5);
      assert.equal(me.price_list.item_count, 10);
    });

    test('force=true publishes a list the guard would hold', async () => {
      await call('POST', '/admin/stores', { id: 'f', name: 'F' });
      await publish('f', ndjson(10));
      const forced = await publish('f', ndjson(1), '?force=true');
      assert.equal(forced.status, 201, forced.text);
      assert.deepEqual([forced.body.state, forced.body.diff.forced, forced.body.diff.verdict], ['latest', true, 'published']);
    });
  });
}
