/**
 * The sender SIGKILLed mid-delivery (the receiver holds the request open): nothing is lost. The
 * lease the killed process held runs out (moved on here, as the clock would), and the
 * restarted service sends the same event again, under the same webhook-id.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { addWebhook } from '../../src/domain/webhooks.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';
import { ISSUED_KEYS, publishJson, storeWithKey } from '../support/test-app.js';
import { findChildKeyLeaks, freePort, killStrayChildren, sleep, startService } from '../robustness/child-service.js';
import { Receiver, verifyFromSpec } from './webhook-receiver.js';

/** What 30 seconds would do to the killed sender's lease. */
async function expireLeases(db: TestDatabase): Promise<void> {
  if (db.dialect === 'sqlite') {
    const file = new Database(db.url.slice('sqlite:'.length));
    file.pragma('busy_timeout = 10000');
    file.prepare('UPDATE webhooks SET lease_until = 0 WHERE lease_until IS NOT NULL').run();
    file.close();
    return;
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query("UPDATE webhooks SET lease_until = now() - interval '1 minute' WHERE lease_until IS NOT NULL");
  await client.end();
}

for (const dialect of DIALECTS) {
  describe(`webhook sender SIGKILLed mid-delivery (${dialect})`, () => {
    const receivers: Receiver[] = [];
    after(async () => {
      killStrayChildren();
      for (const r of receivers) await r.close();
    });

    test('the event is delivered after the restart, same webhook-id, and nothing leaks a key', async () => {
      const db = await createTestDatabase(dialect);
      try {
        await storeWithKey(db.db, 'crash-hooks');
        const receiver = await new Receiver((n) => (n === 0 ? 'hang' : 200)).start();
        receivers.push(receiver);
        const { record, secret } = await addWebhook(db.db, { storeId: 'crash-hooks', url: receiver.url }, { allowHttp: true, allowPrivate: true });
        const env = { DATABASE_URL: db.url, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
        const port = await freePort();
        let service = await startService(env, port);
        await publishJson(db.db, 'crash-hooks', [{ offer_id: 'a', name: 'A', price: 10 }]);

        await receiver.waitFor(1);
        service.child.kill('SIGKILL');
        assert.equal((await service.exited).signal, 'SIGKILL');
        const [pending] = await db.db.deliveries.outbox.messages(record.id);
        assert.equal(pending.state, 'pending', 'the killed attempt left the message in the outbox');

        await expireLeases(db);
        service = await startService(env, port);
        await receiver.waitFor(2);
        let state = '';
        for (let i = 0; i < 100 && state !== 'delivered'; i++) {
          state = (await db.db.deliveries.outbox.messages(record.id))[0].state;
          if (state !== 'delivered') await sleep(100);
        }
        assert.equal(state, 'delivered');
        service.child.kill('SIGTERM');
        await service.exited;

        const [first, second] = receiver.received;
        assert.equal(second.headers['webhook-id'], first.headers['webhook-id']);
        assert.equal(second.body, first.body);
        assert.ok(verifyFromSpec(secret, second.headers, second.body));
        assert.equal(JSON.parse(second.body).type, 'price_list.published');
        assert.deepEqual(findChildKeyLeaks(ISSUED_KEYS), []);
      } finally {
        await db.drop();
      }
    });
  });
}
