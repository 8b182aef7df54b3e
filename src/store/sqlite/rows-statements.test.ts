/**
 * SQLite's write thread keeps every statement text it is sent prepared, and a VALUES list is a
 * text for each number of rows: the ledger's and the touches' statements take rows in powers of
 * two (SqliteDialect.rowsInStatement), so the texts stay few whatever the batch sizes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queuedDelivery, queuedRuns } from '../../../test/support/queued-deliveries.js';
import type { DeliverySql } from '../sql/delivery-sql.js';
import { LedgerWrites } from '../sql/ledger-writes.js';
import { SqliteDialect } from './dialect.js';

const sqlite = SqliteDialect.prototype;
const dialect = {
  rowsQuery: sqlite.rowsQuery, rowsParams: sqlite.rowsParams, rowsInStatement: sqlite.rowsInStatement, timeParam: (at: Date) => at.getTime(),
} as unknown as DeliverySql;

test('the ledger\'s batches of 1 to 1,100 runs are written with a few texts, every run once', async () => {
  const texts = new Set<string>();
  const writes = new LedgerWrites(dialect);
  const T = Date.UTC(2026, 11, 7);
  for (let runs = 1; runs <= 1_100; runs++) {
    // Each consumer new to the writer: every run tried by the UPDATE, then inserted by the guarded INSERT.
    const batch = queuedRuns(Array.from({ length: runs }, (_, i) => queuedDelivery(T + i, { client_address: `${runs}.${i}` })));
    const statements = await writes.statements(batch);
    for (const { sql } of statements) texts.add(sql);
    const rowsOf = (kind: string, width: number) => statements.filter((q) => q.sql.startsWith(kind)).reduce((sum, q) => sum + q.params.length / width, 0);
    assert.equal(rowsOf('UPDATE', 16), runs, `${runs} runs: each tried once`);
    assert.equal(rowsOf('INSERT', 18), runs, `${runs} runs: each inserted once`);
  }
  // 1, 2, 4, … 256 and 500 rows: 10 texts for each of the two statements.
  assert.equal(texts.size, 20);
});
