import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { buildAdminApp } from '../../src/http/admin/admin-app.js';
import { openDatabase } from '../../src/store/factory.js';
import { ADMIN_TOKEN } from '../admin/admin-harness.js';
import { killStrayChildren, runCli, spawnCli } from '../robustness/child-service.js';
import { createTestDatabase, DIALECTS } from '../support/dialects.js';
import { storeWithKey } from '../support/test-app.js';

for (const dialect of DIALECTS) {
  describe(`webhooks on the internal API (${dialect})`, () => {
    test('add shows the secret once; list shows failing and never the secret; remove; bad targets 422', async () => {
      const db = await createTestDatabase(dialect);
      try {
        await storeWithKey(db.db, 'admin-hooks');
        const config = loadConfig({ DATABASE_URL: db.url, ADMIN_TOKEN, LOG_LEVEL: 'silent', WEBHOOK_ALLOW_HTTP: 'true' });
        const admin = await buildAdminApp({ config, db: db.db });
        const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
        const added = await admin.inject({ method: 'POST', url: '/admin/stores/admin-hooks/webhooks', headers: auth, payload: { url: 'https://hooks.example.com/in', events: ['price_list.published'] } });
        assert.equal(added.statusCode, 201, added.body);
        const body = added.json() as { id: string; secret: string; events: string[]; failing: boolean };
        assert.match(body.secret, /^whsec_/);
        assert.deepEqual(body.events, ['price_list.published']);
        assert.equal(added.headers['cache-control'], 'no-store');

        const listed = await admin.inject({ method: 'GET', url: '/admin/stores/admin-hooks/webhooks', headers: auth });
        assert.equal(listed.statusCode, 200);
        assert.ok(!listed.body.includes(body.secret) && !listed.body.includes('whsec_'));
        assert.deepEqual((listed.json() as { webhooks: { id: string; failing: boolean }[] }).webhooks.map((h) => [h.id, h.failing]), [[body.id, false]]);

        const privateTarget = await admin.inject({ method: 'POST', url: '/admin/stores/admin-hooks/webhooks', headers: auth, payload: { url: 'http://127.0.0.1:9/x' } });
        assert.equal(privateTarget.statusCode, 422);
        assert.match(privateTarget.json().detail, /private/);
        const unknownStore = await admin.inject({ method: 'POST', url: '/admin/stores/nope/webhooks', headers: auth, payload: { url: 'https://hooks.example.com/in' } });
        assert.equal(unknownStore.statusCode, 404);

        assert.equal((await admin.inject({ method: 'DELETE', url: `/admin/webhooks/${body.id}`, headers: auth })).statusCode, 204);
        const again = await admin.inject({ method: 'DELETE', url: `/admin/webhooks/${body.id}`, headers: auth });
        assert.equal(again.statusCode, 404);
        assert.equal(again.json().code, 'webhook_not_found');
        await admin.close();
      } finally {
        await db.drop();
      }
    });
  });
}

describe('webhook commands (CLI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'price-export-webhook-cli-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'cli.db')}` };
  after(() => {
    killStrayChildren();
    rmSync(dir, { recursive: true, force: true });
  });

  test('webhook add prints id and secret once, list shows it (failing column) without the secret, remove takes it away', async () => {
    await runCli(['store', 'create', '--id', 'cli-hooks', '--name', 'CLI hooks'], env);
    const added = await runCli(['webhook', 'add', '--store', 'cli-hooks', '--url', 'https://hooks.example.com/in', '--events', 'price_list.published,consumer.behind'], env);
    const id = /^id (wh_\S+)$/m.exec(added.stdout)?.[1];
    const secret = /^secret (whsec_\S+)$/m.exec(added.stdout)?.[1];
    assert.ok(id && secret, added.stdout);
    assert.match(added.stdout, /^events price_list\.published,consumer\.behind$/m);

    const listed = await runCli(['webhook', 'list', '--store', 'cli-hooks'], env);
    assert.match(listed.stdout, /failing_since/);
    assert.ok(listed.stdout.includes(id) && !listed.stdout.includes(secret));

    const refused = spawnCli(['webhook', 'add', '--store', 'cli-hooks', '--url', 'http://10.0.0.1/hook'], env);
    assert.notEqual((await refused.exited).code, 0);

    await runCli(['webhook', 'remove', id], env);
    const store = await openDatabase(env.DATABASE_URL);
    try {
      assert.deepEqual(await store.deliveries.webhooks.list('cli-hooks'), []);
    } finally {
      await store.close();
    }
  });
});
