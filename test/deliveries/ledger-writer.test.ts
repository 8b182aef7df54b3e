/*
 * The delivery ledger's writer (src/domain/ledger.ts) sets its flush timer only while records
 * wait, so an instance nobody downloads from wakes for nothing, and still writes a record
 * within its flush interval of the answer; a batch waits that interval for a busy consumer's
 * answers (a run, one row) and goes out early only at so many runs or records.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DeliveryLedger } from '../../src/domain/ledger.js';
import type { QueuedDelivery } from '../../src/store/delivery-types.js';
import { createTestDatabase, DIALECTS } from '../support/dialects.js';
import { storeWithKey } from '../support/test-app.js';
import { until } from '../support/until.js';

const answered = (storeId: string, atMs: number, clientAddress = '203.0.113.9'): QueuedDelivery => ({
  store_id: storeId, key_id: 'k1', at_ms: atMs, address: 'prices', format: 'csv', profile_id: null, only_available: false, version: 1,
  status: 200, bytes_sent: 100, finished: true, duration_ms: 5, client_class: 'yandex', client_address: clientAddress,
});

for (const dialect of DIALECTS) {
  describe(`the delivery ledger's writer (${dialect})`, () => {
    test('sets no timer while nothing is recorded; writes a record within its flush interval, then sets none again', async () => {
      const own = await createTestDatabase(dialect);
      const ledger = new DeliveryLedger(own.db.deliveries.ledger, { retentionDays: 30, flushEveryMs: 10 });
      try {
        await storeWithKey(own.db, 'ledger-timer');
        ledger.start();
        assert.equal(ledger.flushPending, false, 'idle: no flush timer');
        ledger.record(answered('ledger-timer', Date.now()));
        assert.equal(ledger.flushPending, true, 'a record waits: its flush is set');
        await until('the record written', async () => (await own.db.deliveries.ledger.page('ledger-timer', 10, null)).length === 1);
        assert.equal(ledger.flushPending, false, 'written: no timer left');
        ledger.record(answered('ledger-timer', Date.now() + 1));
        await until('the second record written', async () => (await own.db.deliveries.ledger.page('ledger-timer', 10, null)).length === 2);
      } finally {
        await ledger.stop();
        await own.drop();
      }
    });

    test("a batch waits its interval for a busy consumer's answers, and goes out early at so many runs or records", async () => {
      const own = await createTestDatabase(dialect);
      const ledger = new DeliveryLedger(own.db.deliveries.ledger, { retentionDays: 30, flushEveryMs: 3_600_000, batchRuns: 3, batchRecords: 10 });
      const listed = async () => (await own.db.deliveries.ledger.page('ledger-batches', 100, null)).length;
      try {
        await storeWithKey(own.db, 'ledger-batches');
        ledger.start();
        const at = Date.now();
        for (let i = 0; i < 9; i++) ledger.record(answered('ledger-batches', at + i));
        assert.equal(ledger.writing, false, "nine answers of one consumer are one run: the batch waits");
        ledger.record(answered('ledger-batches', at + 9));
        assert.equal(ledger.writing, true, 'the tenth record sends the batch');
        await ledger.flush(); // nothing more queued: waits for the batch in flight
        assert.equal(await listed(), 10, 'the ten answers written');
        ledger.record(answered('ledger-batches', at + 10, '198.51.100.1'));
        ledger.record(answered('ledger-batches', at + 11, '198.51.100.2'));
        assert.equal(ledger.writing, false, 'two runs wait');
        ledger.record(answered('ledger-batches', at + 12, '198.51.100.3'));
        assert.equal(ledger.writing, true, "a third consumer's run sends the batch");
        await ledger.flush();
        assert.equal(await listed(), 13, "the three consumers' answers written");
      } finally {
        await ledger.stop();
        await own.drop();
      }
    });
  });
}
