import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { DeliveryRecord } from '../store/types.js';
import { LedgerQueue } from './ledger-queue.js';

const record = (i: number, extra: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  store_id: 'shop', key_id: `key_${i % 2}`, at: new Date(Date.UTC(2026, 10, 25, 12, 0, 0, i)), address: 'prices', format: 'yml', profile_id: 3,
  only_available: true, version: 7, status: 304, bytes_sent: 100 + i, finished: true, duration_ms: i, client_class: 'yandex',
  client_address: '198.51.100.1', ...extra,
});

test('the ledger queue gives back every record as it was pushed, in order, and is empty after', () => {
  const queue = new LedgerQueue();
  const pushed = [record(0), record(1, { format: null, profile_id: null, only_available: null, version: null, status: 400, finished: false }), record(2)];
  for (const r of pushed) queue.push(r);
  assert.equal(queue.length, 3);
  assert.deepEqual(queue.drain(), pushed);
  assert.equal(queue.length, 0);
  assert.deepEqual(queue.drain(), []);
  queue.push(record(3));
  assert.deepEqual(queue.drain(), [record(3)]);
});
