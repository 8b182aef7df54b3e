import assert from 'node:assert/strict';
import { after, before, mock, test } from 'node:test';
import { DeliveryLedger } from '../../src/domain/ledger.js';
import type { QueuedDelivery } from '../../src/store/types.js';
import { createTestDatabase, type TestDatabase } from '../support/dialects.js';
import { storeWithKey } from '../support/test-app.js';

/*
 * The ledger's batch timer is set by a record, not kept running (domain/ledger.ts): an idle
 * instance is not woken every second. Time is node:test's mock clock, never a sleep; the
 * records go to a real SQLite database.
 */

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase('sqlite');
  await storeWithKey(db.db, 'ledger-timer');
});
after(async () => db.drop());

const record = (at_ms: number): QueuedDelivery => ({
  store_id: 'ledger-timer', key_id: 'k1', at_ms, address: 'prices', format: 'csv', profile_id: null, only_available: false, version: 1,
  status: 200, bytes_sent: 100, finished: true, duration_ms: 5, client_class: 'yandex', client_address: '203.0.113.9',
});

test('an idle ledger is not woken; a record is written one flush interval after it came', async () => {
  mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  const ledger = new DeliveryLedger(db.db.deliveries.ledger, { retentionDays: 30, flushEveryMs: 1_000, retentionEveryMs: 3_600_000 });
  let flushes = 0;
  const flush = ledger.flush.bind(ledger);
  ledger.flush = () => {
    flushes++;
    return flush();
  };
  try {
    ledger.start();
    mock.timers.tick(10_000);
    assert.equal(flushes, 0, 'ten idle seconds, no flush');

    ledger.record(record(Date.now()));
    ledger.record(record(Date.now() + 1));
    mock.timers.tick(999);
    assert.equal(flushes, 0, 'the batch waits its second');
    mock.timers.tick(1);
    assert.equal(flushes, 1, 'one flush for the batch');
    mock.timers.tick(10_000);
    assert.equal(flushes, 1, 'idle again: no more');

    ledger.record(record(Date.now() + 2));
    mock.timers.tick(1_000);
    assert.equal(flushes, 2, 'a later record sets the timer again');
  } finally {
    mock.timers.reset();
    await ledger.stop();
  }
  const stored = await db.db.deliveries.ledger.page('ledger-timer', 10, null);
  assert.equal(stored.length, 3, 'every record written');
});
