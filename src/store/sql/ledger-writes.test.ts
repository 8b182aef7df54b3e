/**
 * Which runs of a batch the ledger's writer tries to continue (ledger-writes.ts), in memory: the
 * statements it hands the dialect. The contract tests (store/ledger.contract.test.ts) show the
 * runs continued, or not, on both dialects.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queuedDelivery as record, queuedRuns as batch } from '../../../test/support/queued-deliveries.js';
import type { QueuedDelivery } from '../delivery-types.js';
import type { DeliverySql } from './delivery-sql.js';
import { LedgerWrites, SELDOM_AFTER_MS } from './ledger-writes.js';

const T = Date.UTC(2026, 11, 6, 9, 0, 0);

/** SQLite's way: the rows' values bound in row order. */
const dialect = { rowsQuery: () => 'VALUES …', rowsParams: (_: unknown, values: unknown[]) => values, rowsInStatement: (left: number, most: number) => Math.min(left, most), timeParam: (at: Date) => at.getTime() } as unknown as DeliverySql;
const updates = async (writes: LedgerWrites, records: QueuedDelivery[]) =>
  (await writes.statements(batch(records))).filter((q) => q.sql.startsWith('UPDATE')).map((q) => q.params[0]);

test('a consumer this writer answered less than a minute before is not tried: its stored run cannot take the answer', async () => {
  const writes = new LedgerWrites(dialect);
  assert.deepEqual(await updates(writes, [record(T)]), ['shop'], 'a consumer not seen yet is tried');
  assert.deepEqual(await updates(writes, [record(T + SELDOM_AFTER_MS - 1)]), [], 'answered 59.999 s before');
  assert.deepEqual(await updates(writes, [record(T + 2 * SELDOM_AFTER_MS - 2)]), [], 'the last answer counts, not the first');
  assert.deepEqual(await updates(writes, [record(T + 3 * SELDOM_AFTER_MS - 1)]), ['shop'], 'a minute after the last');
});

test('only a consumer\'s first run in the batch is tried, and an older batch does not move its last answer back', async () => {
  const writes = new LedgerWrites(dialect);
  const other = { client_address: '192.0.2.2' };
  // Three runs of one consumer (200 between 304s), one of another: two tried.
  const first = await writes.statements(batch([record(T), record(T + 1, { status: 200 }), record(T + 2), record(T + 3, other)]));
  const tried = first.filter((q) => q.sql.startsWith('UPDATE'));
  assert.equal(tried.length, 1);
  assert.equal(tried[0].params.length, 2 * 16, 'two consumers, one row each');
  assert.deepEqual(tried[0].params.filter((p) => typeof p === 'string' && p.startsWith('192.0.2.')), ['192.0.2.1', '192.0.2.2']);
  assert.deepEqual(await updates(writes, [record(T + 10 * SELDOM_AFTER_MS)]), ['shop']);
  assert.deepEqual(await updates(writes, [record(T + 5 * SELDOM_AFTER_MS)]), [], 'older than its last answer');
  assert.deepEqual(await updates(writes, [record(T + 10 * SELDOM_AFTER_MS + 1)]), [], 'its last answer is still the newest');
});

test('a batch spanning minutes (queued while the database was away) still tries only a consumer\'s first run', async () => {
  const writes = new LedgerWrites(dialect);
  // Three runs of one consumer, the last two minutes after the others: its answer before is in this batch, not stored.
  const statements = await writes.statements(batch([record(T), record(T + 1, { status: 200 }), record(T + 2 * SELDOM_AFTER_MS)]));
  const tried = statements.filter((q) => q.sql.startsWith('UPDATE'));
  assert.deepEqual(tried.map((q) => q.params.length), [16], 'one row: the first run');
  assert.equal(tried[0].params[14], 1, 'of one record'); // `records`, the UPDATE's 15th column
});
