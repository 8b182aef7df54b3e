/**
 * How the ledger's queue gathers records into runs (DeliveryRuns) and how a run is ordered and
 * stored (ledger-runs.ts), in memory. The contract tests (store/ledger.contract.test.ts) show
 * the same runs written and read back on both dialects.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeliveryRuns, RUN_ID_SPACE, RUN_SPAN_MS } from '../delivery-types.js';
import { queuedDelivery as record, queuedRuns as queued } from '../../../test/support/queued-deliveries.js';
import { lastAtOf, orderedRun, repeatedOf } from './ledger-runs.js';

const T = Date.UTC(2026, 10, 26, 9, 0, 0);

/** The batch's runs as objects: each run's first record, and its later records' triples. */
const runsOf = (b: DeliveryRuns) => Array.from({ length: b.runs }, (_, i) => ({
  first: {
    store_id: b.storeId[i], key_id: b.keyId[i], at_ms: b.atMs[i], address: b.address[i], format: b.format[i], profile_id: b.profileId[i],
    only_available: b.onlyAvailable[i], version: b.version[i], status: b.status[i], bytes_sent: b.bytesSent[i], finished: b.finished[i],
    duration_ms: b.durationMs[i], client_class: b.clientClass[i], client_address: b.clientAddress[i],
  },
  repeated: b.repeated[i] ?? [],
}));

test('a consumer\'s repeats join its run as [offset, bytes, duration], other stores\' answers in between', () => {
  const batch = queued([record(T), record(T + 5, { store_id: 'other' }), record(T + 7, { bytes_sent: 200, duration_ms: 4 }), record(T + 9)]);
  assert.equal(batch.length, 4);
  const [shop, other] = runsOf(batch);
  assert.equal(batch.runs, 2);
  assert.equal(shop.first.at_ms, T);
  assert.deepEqual(shop.repeated, [7, 200, 4, 9, 180, 1]);
  assert.equal(repeatedOf(orderedRun(batch, 0)), '[7,200,4,9,180,1]');
  assert.equal(lastAtOf(orderedRun(batch, 0)), T + 9);
  assert.equal(other.first.store_id, 'other');
  assert.equal(repeatedOf(orderedRun(batch, 1)), null);
  assert.equal(lastAtOf(orderedRun(batch, 1)), T + 5);
});

test('an answer of another shape ends the consumer\'s run, and the next starts a new one', () => {
  const batch = queued([record(T), record(T + 1, { status: 200 }), record(T + 2), record(T + 3, { version: 4 }), record(T + 4, { format: 'xml' })]);
  assert.deepEqual(runsOf(batch).map((run) => [run.first.at_ms - T, run.repeated.length / 3]), [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]]);
});

test('another consumer of the store (class or address) has its own run', () => {
  const batch = queued([record(T), record(T + 1, { client_address: '192.0.2.2' }), record(T + 2, { client_class: 'google' }), record(T + 3)]);
  assert.equal(batch.runs, 3);
  assert.deepEqual(runsOf(batch)[0].repeated, [3, 180, 1]);
});

test('a run ends when full, or when a record starts more than half the span from its first', () => {
  const full = queued(Array.from({ length: RUN_ID_SPACE + 1 }, (_, i) => record(T + i)));
  assert.deepEqual(runsOf(full).map((run) => 1 + run.repeated.length / 3), [RUN_ID_SPACE, 1]);
  const spread = queued([record(T), record(T + RUN_SPAN_MS / 2), record(T + RUN_SPAN_MS / 2 + 1)]);
  assert.deepEqual(runsOf(spread).map((run) => run.first.at_ms - T), [0, RUN_SPAN_MS / 2 + 1]);
});

test('a run whose records came out of time order is stored oldest first; records of one millisecond keep their order', () => {
  const batch = queued([record(T + 100, { bytes_sent: 1 }), record(T + 40, { bytes_sent: 2 }), record(T + 100, { bytes_sent: 3 }), record(T + 40, { bytes_sent: 4 })]);
  assert.deepEqual(runsOf(batch)[0].repeated, [-60, 2, 1, 0, 3, 1, -60, 4, 1]);
  const ordered = orderedRun(batch, 0);
  assert.deepEqual(ordered, { atMs: T + 40, bytesSent: 2, durationMs: 1, repeated: [0, 4, 1, 60, 1, 1, 60, 3, 1] });
  assert.equal(lastAtOf(ordered), T + 100);
  // The queued run is left as it was.
  assert.equal(batch.atMs[0], T + 100);
});

test('a consumer whose run ended keeps one open run: a store\'s other consumers still find theirs', () => {
  // Two consumers of one store, the first flipping between two shapes: each flip ends its run.
  const other = { client_address: '192.0.2.9' };
  const batch = queued([record(T), record(T + 1, other), record(T + 2, { status: 200 }), record(T + 3), record(T + 4, other), record(T + 5, { status: 200 })]);
  assert.deepEqual(runsOf(batch).map((run) => [run.first.client_address, run.first.status, run.repeated]), [
    ['192.0.2.1', 304, []],
    ['192.0.2.9', 304, [3, 180, 1]],
    ['192.0.2.1', 200, []],
    ['192.0.2.1', 304, []],
    ['192.0.2.1', 200, []],
  ]);
});
