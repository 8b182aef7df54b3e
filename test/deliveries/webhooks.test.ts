import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { checkConsumerAlerts } from '../../src/domain/consumer-alerts.js';
import { addWebhook, listWebhooks, removeWebhook } from '../../src/domain/webhooks.js';
import { postWebhook } from '../../src/domain/webhook-post.js';
import { RETRY_FOR_MS, WebhookSender } from '../../src/domain/webhook-sender.js';
import { publicationEvent } from '../../src/model/webhook-events.js';
import { DeliveryRuns, type DeliveryRecord } from '../../src/store/delivery-types.js';
import { openDatabase } from '../../src/store/factory.js';
import { OUTBOX_APPLICATION_NAME, OUTBOX_CHANNEL } from '../../src/store/postgres/outbox-watch.js';
import { ANY_DUE_SQL } from '../../src/store/sql/outbox.js';
import type { Database, OutboxRepository } from '../../src/store/types.js';
import { createTestDatabase, DIALECTS, terminateBackends, type TestDatabase } from '../support/dialects.js';
import { ISSUED_KEYS, publishJson, storeWithKey } from '../support/test-app.js';
import { Receiver, verifyFromSpec } from './webhook-receiver.js';

const LOCAL = { allowHttp: true, allowPrivate: true };
/** A poll an hour away: what a test sees sooner was sent because the sender was woken. */
const HOUR = 3_600_000;
const items = (price: number) => [{ offer_id: 'a', name: 'A', price }, { offer_id: 'b', name: 'B', price: 5 }];

/** A movable clock: retries and staleness are tested by moving it, never by sleeping. */
function clock(start = Date.now()) {
  let now = start;
  return { now: () => new Date(now), move: (ms: number) => { now += ms; } };
}

/**
 * Resolves once a PostgreSQL sender's watch has LISTENed (its connection idle after the LISTEN,
 * as pg_stat_activity shows): a NOTIFY before that reaches nobody. Fails after 10 s.
 */
async function outboxListening(url: string, count = 1): Promise<void> {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    for (const deadline = Date.now() + 10_000; ;) {
      const { rows } = await admin.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND state = 'idle' AND query = $2",
        [OUTBOX_APPLICATION_NAME, `LISTEN ${OUTBOX_CHANNEL}`],
      );
      if (rows[0].n === count) return;
      if (Date.now() > deadline) assert.fail(`${rows[0].n} outbox watches listening, not ${count}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    await admin.end();
  }
}

const delivery = (storeId: string, over: Partial<DeliveryRecord>): DeliveryRecord => ({
  store_id: storeId, key_id: 'k1', at: new Date(), address: 'prices', format: 'csv', profile_id: null, only_available: false, version: 1,
  status: 200, bytes_sent: 100, finished: true, duration_ms: 5, client_class: 'yandex', client_address: '203.0.113.9', ...over,
});

for (const dialect of DIALECTS) {
  describe(`webhooks (${dialect})`, () => {
    let db: TestDatabase;
    let store: Database;
    const receivers: Receiver[] = [];
    const receiver = async (behaviour?: ConstructorParameters<typeof Receiver>[0]) => {
      const r = await new Receiver(behaviour).start();
      receivers.push(r);
      return r;
    };

    before(async () => {
      db = await createTestDatabase(dialect);
      store = db.db;
    });
    after(async () => {
      for (const r of receivers) await r.close();
      await db.drop();
    });

    test('every event type reaches a real receiver with a valid Standard Webhooks signature', async () => {
      const key = await storeWithKey(store, 'hooks-all');
      const r = await receiver();
      const { record, secret } = await addWebhook(store, { storeId: 'hooks-all', url: r.url }, LOCAL);
      assert.match(record.id, /^wh_/);
      assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      const time = clock();

      // price_list.published: inserted by the publication's own commit.
      await publishJson(store, 'hooks-all', items(10));
      const v2 = await publishJson(store, 'hooks-all', items(11));
      // publication.held / .quarantined: the one insert the guard's commit makes (#13), here on its own.
      await store.deliveries.outbox.enqueue(publicationEvent('publication.held', 'hooks-all', 3, time.now(), { added: 0, removed: 1, price_up: 0, price_down: 0, unchanged: 1 }));
      await store.deliveries.outbox.enqueue(publicationEvent('publication.quarantined', 'hooks-all', 4, time.now(), { added: 0, removed: 0, price_up: 1, price_down: 0, unchanged: 1 }));
      // Sent at once, on the real clock: the standardwebhooks package verifies them as a receiver would.
      await new WebhookSender(store.deliveries.outbox, { allowPrivate: true }).runOnce();
      assert.equal(r.received.length, 4);
      const library = new Webhook(secret);
      for (const message of r.received) {
        assert.doesNotThrow(() => library.verify(message.body, message.headers as Record<string, string>), 'valid by the standardwebhooks package');
        assert.throws(() => library.verify(message.body.replace('}', ' }'), message.headers as Record<string, string>), 'a changed body is refused');
      }

      // consumer.failing: three cut downloads in a row; consumer.behind: fetchers still on version 1, 121 minutes on.
      await store.deliveries.ledger.insert(DeliveryRuns.of([1, 2, 3].map((i) => delivery('hooks-all', { at: new Date(time.now().getTime() - i * 1000), finished: false }))));
      await store.deliveries.ledger.insert(DeliveryRuns.of([delivery('hooks-all', { client_class: 'google', client_address: '198.51.100.7', version: 1 })]));
      const window = { ledgerDays: 30, staleAfterMin: 120, now: time.now };
      assert.equal(await checkConsumerAlerts(store, window), 1, 'failing (yandex); nobody is behind yet');
      time.move(121 * 60_000);
      assert.equal(await checkConsumerAlerts(store, window), 2, 'behind (yandex and google)');
      assert.equal(await checkConsumerAlerts(store, window), 0, 'once per episode');
      await new WebhookSender(store.deliveries.outbox, { allowPrivate: true, now: time.now }).runOnce();

      const types = new Set(r.received.map((m) => JSON.parse(m.body).type));
      assert.deepEqual([...types].sort(), ['consumer.behind', 'consumer.failing', 'price_list.published', 'publication.held', 'publication.quarantined']);
      assert.equal(r.received.length, 7);

      for (const message of r.received) {
        const sentAt = new Date(Number(message.headers['webhook-timestamp']) * 1000);
        assert.ok(verifyFromSpec(secret, message.headers, message.body, sentAt), 'valid by the spec');
        assert.equal(library.sign(String(message.headers['webhook-id']), sentAt, message.body), message.headers['webhook-signature'], 'the package signs alike');
        assert.equal(message.headers['content-type'], 'application/json');
        const body = JSON.parse(message.body) as { type: string; timestamp: string; data: Record<string, unknown> };
        assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
        assert.equal(body.data.store_id, 'hooks-all');
        assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
        for (const issued of ISSUED_KEYS) assert.ok(!message.body.includes(issued.slice(4)), 'no key in a webhook body');
        assert.ok(!message.body.includes(key.slice(4)));
      }
      const published = r.received.map((m) => JSON.parse(m.body)).filter((b) => b.type === 'price_list.published');
      assert.deepEqual(published.map((b) => b.data.version), [1, v2.version]);
      const held = r.received.map((m) => JSON.parse(m.body)).find((b) => b.type === 'publication.held');
      assert.deepEqual(held.data, { store_id: 'hooks-all', version: 3, diff: { added: 0, removed: 1, price_up: 0, price_down: 0, unchanged: 1 } });
      const behind = r.received.map((m) => JSON.parse(m.body)).find((b) => b.type === 'consumer.behind' && b.data.consumer.client_class === 'google');
      assert.equal(behind.data.version, 2);
      assert.equal(behind.data.consumer.last_version, 1);
      // A tampered signature fails the spec's verifier too (the verifier can fail).
      const first = r.received[0];
      assert.equal(verifyFromSpec(secret, { ...first.headers, 'webhook-id': 'msg_other' }, first.body), false);
    });

    test('a receiver that fails twice then accepts gets the event three times, and later events after it, in order', async () => {
      await storeWithKey(store, 'hooks-retry');
      const r = await receiver((n) => (n < 2 ? 500 : 200));
      const { secret, record } = await addWebhook(store, { storeId: 'hooks-retry', url: r.url, events: ['price_list.published'] }, LOCAL);
      await publishJson(store, 'hooks-retry', items(10));
      await publishJson(store, 'hooks-retry', items(12));
      const time = clock(Date.now() + 60_000);
      const sender = new WebhookSender(store.deliveries.outbox, { allowPrivate: true, now: time.now });

      assert.equal(await sender.runOnce(), 1, 'first attempt fails; the second event waits behind it');
      assert.equal(await sender.runOnce(), 0, 'not due yet');
      time.move(10 * 60_000);
      assert.equal(await sender.runOnce(), 1, 'second attempt fails');
      time.move(10 * 60_000);
      assert.equal(await sender.runOnce(), 2, 'third attempt succeeds, then the next event goes');

      const versions = r.received.map((m) => JSON.parse(m.body).data.version);
      assert.deepEqual(versions, [1, 1, 1, 2]);
      const ids = r.received.map((m) => m.headers['webhook-id']);
      assert.equal(new Set(ids.slice(0, 3)).size, 1, 'one webhook-id across the retries');
      assert.notEqual(ids[3], ids[0]);
      r.received.forEach((m, i) => assert.ok(verifyFromSpec(secret, m.headers, m.body, time.now(), 3600), `attempt ${i} signed`));
      assert.deepEqual((await store.deliveries.outbox.messages(record.id)).map((m) => [m.state, m.attempts]), [['delivered', 3], ['delivered', 1]]);
      assert.equal((await listWebhooks(store, 'hooks-retry'))[0].failing_since, null);
    });

    test('after 24 hours of failures the message is given up and the webhook shows failing', async () => {
      await storeWithKey(store, 'hooks-dead');
      const r = await receiver(() => 503);
      await addWebhook(store, { storeId: 'hooks-dead', url: r.url }, LOCAL);
      await publishJson(store, 'hooks-dead', items(10));
      const time = clock(Date.now() + 60_000);
      const started = time.now().getTime();
      const sender = new WebhookSender(store.deliveries.outbox, { allowPrivate: true, now: time.now });
      let hooks = await listWebhooks(store, 'hooks-dead');
      for (let i = 0; i < 100 && hooks[0].failing_since === null; i++) {
        await sender.runOnce();
        time.move(30 * 60_000);
        hooks = await listWebhooks(store, 'hooks-dead');
      }
      assert.ok(hooks[0].failing_since, 'marked failing');
      assert.equal(hooks[0].last_error, 'answered 503');
      const gaveUpAfter = hooks[0].failing_since!.getTime() - started;
      assert.ok(gaveUpAfter >= RETRY_FOR_MS - 3_600_000 && gaveUpAfter <= RETRY_FOR_MS + 3_600_000, `gave up after ${gaveUpAfter / 3_600_000} h`);
      const attempts = r.received.length;
      assert.ok(attempts >= 10, `retried with backoff (${attempts} attempts)`);
      time.move(48 * 3_600_000);
      await sender.runOnce();
      assert.equal(r.received.length, attempts, 'nothing more after giving up');
    });

    test('private targets are refused without WEBHOOK_ALLOW_PRIVATE, at add time and at connect time; redirects are not followed', async () => {
      await storeWithKey(store, 'hooks-ssrf');
      const r = await receiver((n) => (n === 0 ? 302 : 200));
      const strict = { allowHttp: true, allowPrivate: false };
      for (const url of [r.url, `http://localhost:${r.port}/hook`, 'http://10.1.2.3/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/x', 'http://[::ffff:127.0.0.1]/x']) {
        await assert.rejects(addWebhook(store, { storeId: 'hooks-ssrf', url }, strict), (error: Error & { code?: string }) => error.code === 'invalid_input', url);
      }
      await assert.rejects(addWebhook(store, { storeId: 'hooks-ssrf', url: 'http://example.com/hook' }, { allowHttp: false, allowPrivate: false }), /https/);
      await assert.rejects(addWebhook(store, { storeId: 'hooks-ssrf', url: 'https://example.com/hook', events: ['price_list.deleted'] }, LOCAL), /unknown event/);
      // At connect time: the address DNS gives is checked by the socket's own lookup.
      const byName = await postWebhook(`http://localhost:${r.port}/hook`, {}, '{}', { allowPrivate: false });
      assert.equal(byName.ok, false);
      assert.match(byName.error!, /refused/);
      const literal = await postWebhook(r.url, {}, '{}', { allowPrivate: false });
      assert.equal(literal.ok, false);
      assert.equal(r.received.length, 0, 'nothing reached the private receiver');
      // A redirect is a failure, and its target gets nothing.
      const redirected = await postWebhook(r.url, {}, '{}', { allowPrivate: true });
      assert.deepEqual(redirected, { ok: false, status: 302, error: 'answered 302' });
      assert.deepEqual(r.received.map((m) => m.path), ['/hook']);
    });

    test('two instances sending one outbox deliver each event exactly once, in order per webhook', async () => {
      await storeWithKey(store, 'hooks-two');
      const r = await receiver();
      const hooks = [];
      for (let i = 0; i < 3; i++) hooks.push(await addWebhook(store, { storeId: 'hooks-two', url: `${r.url}?h=${i}`, events: ['price_list.published'] }, LOCAL));
      for (let v = 1; v <= 6; v++) await publishJson(store, 'hooks-two', items(10 + v));
      const second = await openDatabase(db.url);
      try {
        const a = new WebhookSender(store.deliveries.outbox, { allowPrivate: true, owner: 'instance-a' });
        const b = new WebhookSender(second.deliveries.outbox, { allowPrivate: true, owner: 'instance-b' });
        await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
        await Promise.all([a.runOnce(), b.runOnce()]);
      } finally {
        await second.close();
      }
      assert.equal(r.received.length, 18, 'three webhooks × six events');
      const seen = r.received.map((m) => `${m.path} ${m.headers['webhook-id']}`);
      assert.equal(new Set(seen).size, 18, 'no event twice');
      for (let i = 0; i < 3; i++) {
        const versions = r.received.filter((m) => m.path.endsWith(`h=${i}`)).map((m) => JSON.parse(m.body).data.version);
        assert.deepEqual(versions, [1, 2, 3, 4, 5, 6], `webhook ${i} in order`);
      }
    });

    test('an idle outbox costs a sender run one claim; webhooks due still go out on every lane', async () => {
      // A database of its own: the other tests' webhooks are not due here.
      const own = await createTestDatabase(dialect);
      try {
        let claims = 0;
        const outbox = own.db.deliveries.outbox;
        const counted: OutboxRepository = Object.create(outbox, {
          claim: { value: (...args: Parameters<OutboxRepository['claim']>) => { claims++; return outbox.claim(...args); } },
        });
        const sender = new WebhookSender(counted, { allowPrivate: true, concurrency: 4 });
        assert.equal(await sender.runOnce(), 0);
        assert.equal(claims, 1, 'one statement a run while nothing is due, not one a lane');

        await storeWithKey(own.db, 'hooks-idle');
        const r = await receiver();
        for (let i = 0; i < 3; i++) await addWebhook(own.db, { storeId: 'hooks-idle', url: `${r.url}?h=${i}`, events: ['price_list.published'] }, LOCAL);
        for (let v = 1; v <= 2; v++) await publishJson(own.db, 'hooks-idle', items(10 + v));
        claims = 0;
        assert.equal(await sender.runOnce(), 6, 'three webhooks × two events in one run');
        assert.equal(r.received.length, 6);
        // The first claim found a webhook, so the three other lanes started: each webhook was
        // claimed once, and each of the four lanes ended on one empty claim (one lane alone: 3 + 1).
        assert.equal(claims, 3 + 4, 'every lane claimed');
      } finally {
        await own.drop();
      }
    });

    test('a started sender sends an event queued by another connection at once, and a failed one at its retry time, with polls an hour apart', async () => {
      // A database of its own: the other tests' webhooks are not due here.
      const own = await createTestDatabase(dialect);
      // Another connection publishes, as the CLI or another instance would.
      const other = await openDatabase(own.url, { startThreads: false });
      const sender = new WebhookSender(own.db.deliveries.outbox, { allowPrivate: true, retryDelayMs: () => 20 });
      try {
        await storeWithKey(own.db, 'hooks-woken');
        const r = await receiver((n) => (n === 1 ? 500 : 200));
        await addWebhook(own.db, { storeId: 'hooks-woken', url: r.url, events: ['price_list.published'] }, LOCAL);
        sender.start({ pollMs: HOUR, watchedPollMs: HOUR });
        // SQLite: every instance on the host is told by the events file; PostgreSQL: by the outbox trigger's NOTIFY.
        assert.equal(sender.watching, true);
        if (dialect === 'postgres') await outboxListening(own.url);
        await publishJson(other, 'hooks-woken', items(10));
        await r.waitFor(1);
        // The second event fails once, and is sent again 20 ms later by the sender's own timer.
        await publishJson(other, 'hooks-woken', items(11));
        await r.waitFor(3);
        assert.deepEqual(r.received.map((m) => JSON.parse(m.body).data.version), [1, 2, 2]);
      } finally {
        await sender.stop();
        await other.close();
        await own.drop();
      }
    });

    if (dialect === 'postgres') {
      test('a started sender whose listening connection is lost listens again, and sends what was queued meanwhile', async () => {
        const own = await createTestDatabase(dialect);
        const other = await openDatabase(own.url, { startThreads: false });
        const sender = new WebhookSender(own.db.deliveries.outbox, { allowPrivate: true, onError: () => {} });
        try {
          await storeWithKey(own.db, 'hooks-relisten');
          const r = await receiver();
          await addWebhook(own.db, { storeId: 'hooks-relisten', url: r.url, events: ['price_list.published'] }, LOCAL);
          sender.start({ pollMs: HOUR, watchedPollMs: HOUR });
          await outboxListening(own.url);
          assert.equal(await terminateBackends(own.url, OUTBOX_APPLICATION_NAME), 1, 'one listening connection per sender');
          // Queued while nobody listens (the watch listens again after 1 s): sent once it does.
          await publishJson(other, 'hooks-relisten', items(10));
          await r.waitFor(1);
          await outboxListening(own.url);
          await publishJson(other, 'hooks-relisten', items(11));
          await r.waitFor(2);
          assert.deepEqual(r.received.map((m) => JSON.parse(m.body).data.version), [1, 2]);
        } finally {
          await sender.stop();
          await other.close();
          await own.drop();
        }
      });
    }

    test('webhook list and remove; a removed webhook gets nothing more', async () => {
      await storeWithKey(store, 'hooks-remove');
      const r = await receiver();
      const { record } = await addWebhook(store, { storeId: 'hooks-remove', url: r.url }, LOCAL);
      assert.deepEqual((await listWebhooks(store, 'hooks-remove')).map((h) => h.id), [record.id]);
      assert.ok(!JSON.stringify(await listWebhooks(store, 'hooks-remove')).includes('whsec_'), 'the secret is never listed');
      await publishJson(store, 'hooks-remove', items(10));
      await removeWebhook(store, record.id);
      await assert.rejects(removeWebhook(store, record.id), /no webhook/);
      await new WebhookSender(store.deliveries.outbox, { allowPrivate: true }).runOnce();
      assert.equal(r.received.length, 0);
      assert.deepEqual(await listWebhooks(store, 'hooks-remove'), []);
    });
  });
}

describe('webhooks (sqlite): the sender beside another process that writes', () => {
  test("an idle outbox's claim only reads: another process's write in progress neither holds it up nor refuses it", async () => {
    const own = await createTestDatabase('sqlite');
    const { default: Sqlite } = await import('better-sqlite3');
    const other = new Sqlite(own.url.slice('sqlite:'.length));
    try {
      await storeWithKey(own.db, 'hooks-beside');
      // Nothing is sent here: the address is only what the claim answers.
      const url = 'http://127.0.0.1:9/hooks-beside';
      await addWebhook(own.db, { storeId: 'hooks-beside', url, events: ['price_list.published'] }, LOCAL);
      // Another process is mid-publication: it holds the write lock. An UPDATE here would wait
      // out the busy timeout (the event loop with it), then fail with "database is locked".
      other.exec('BEGIN IMMEDIATE');
      const now = new Date();
      assert.equal(await own.db.deliveries.outbox.claim('sender-a', now, new Date(now.getTime() + 30_000)), null);
      other.exec('ROLLBACK');
      // With a message due, the claim still takes its webhook.
      await publishJson(own.db, 'hooks-beside', items(10));
      const claimed = await own.db.deliveries.outbox.claim('sender-a', new Date(), new Date(Date.now() + 30_000));
      assert.equal(claimed?.url, url);
    } finally {
      other.close();
      await own.drop();
    }
  });

  test('the first look reads the index of pending messages, not the outbox', async () => {
    const own = await createTestDatabase('sqlite');
    const { default: Sqlite } = await import('better-sqlite3');
    const raw = new Sqlite(own.url.slice('sqlite:'.length), { readonly: true });
    try {
      const plan = (raw.prepare(`EXPLAIN QUERY PLAN ${ANY_DUE_SQL}`).all(0) as { detail: string }[]).map((step) => step.detail).join('; ');
      assert.match(plan, /USING (COVERING )?INDEX webhook_outbox_due/);
    } finally {
      raw.close();
      await own.drop();
    }
  });
});
