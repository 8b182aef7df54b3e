/**
 * Rows written by binary COPY (binary-copy-rows.ts, the ledger's busy batches) read back from a
 * real PostgreSQL as they were sent: every column kind, NULLs, texts of any bytes, integers
 * past 32 bits, times before PostgreSQL's epoch and to the millisecond; alone and inside a
 * transaction, as the ledger sends them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../test/support/dialects.js';
import type { ColumnKind } from '../sql/dialect.js';
import { PostgresDialect } from './dialect.js';

const KINDS: readonly ColumnKind[] = ['text', 'integer', 'bigint', 'boolean', 'time'];
const COLUMNS = ['t', 'i', 'b', 'f', 'at'];

/** Rows as the ledger pushes them (booleans as 1/0, as bit() sends them), and as they read back. */
const ROWS: { sent: unknown[]; read: unknown[] }[] = [
  { sent: ['plain', 0, 0, 1, new Date('2026-12-07T21:04:05.678Z')], read: ['plain', 0, 0, true, '2026-12-07T21:04:05.678Z'] },
  {
    sent: ['tab\there, new\nline, \\ "quotes" {a,b} NULL', -2_147_483_648, 2 ** 53 - 1, 0, new Date('1999-12-31T23:59:59.999Z')],
    read: ['tab\there, new\nline, \\ "quotes" {a,b} NULL', -2_147_483_648, 2 ** 53 - 1, false, '1999-12-31T23:59:59.999Z'],
  },
  { sent: ['Опрос «1С» 🚀', 2_147_483_647, -(2 ** 40) - 3, true, new Date('1970-01-01T00:00:00.001Z')], read: ['Опрос «1С» 🚀', 2_147_483_647, -(2 ** 40) - 3, true, '1970-01-01T00:00:00.001Z'] },
  { sent: ['', null, undefined, null, null], read: ['', null, null, null, null] },
  { sent: [null, 7, 2 ** 32, false, new Date('2100-02-28T12:00:00.000Z')], read: [null, 7, 2 ** 32, false, '2100-02-28T12:00:00.000Z'] },
];

for (const dialect of DIALECTS.filter((name) => name === 'postgres')) {
  describe(`${dialect}: rows written by binary COPY`, () => {
    let testDb: TestDatabase;
    let pg: PostgresDialect;
    before(async () => {
      testDb = await createTestDatabase(dialect, { startThreads: false });
      pg = new PostgresDialect(testDb.url);
      await pg.query({ sql: 'CREATE TABLE copied (n serial, t text, i integer, b bigint, f boolean, at timestamptz)', params: [] });
    });
    after(async () => {
      await pg?.close();
      await testDb?.drop();
    });

    const readBack = async () => {
      const { rows } = await pg.query({ sql: 'SELECT t, i, b, f, at FROM copied ORDER BY n', params: [] });
      await pg.query({ sql: 'DELETE FROM copied', params: [] });
      return rows.map((r) => [r.t, r.i, r.b, r.f, r.at === null ? null : (r.at as Date).toISOString()]);
    };

    it('reads back every kind as sent, alone', async () => {
      const copy = pg.copyRows('copied', COLUMNS, KINDS, ROWS.flatMap((r) => r.sent));
      assert.equal((await pg.query(copy)).changes, ROWS.length);
      assert.deepEqual(await readBack(), ROWS.map((r) => r.read));
    });

    it('runs in a transaction with the statements around it, and a failing one rolls it back', async () => {
      const copy = pg.copyRows('copied', COLUMNS, KINDS, ROWS.flatMap((r) => r.sent));
      const changes = await pg.transaction((function* () {
        const copied = yield copy;
        yield { sql: "INSERT INTO copied (t) VALUES ('after')", params: [] };
        return copied.changes;
      })());
      assert.equal(changes, ROWS.length);
      assert.deepEqual(await readBack(), [...ROWS.map((r) => r.read), ['after', null, null, null, null]]);
      await assert.rejects(pg.transaction((function* () {
        yield copy;
        yield { sql: 'INSERT INTO copied (i) VALUES (?)', params: ['not a number'] };
      })()));
      assert.deepEqual(await readBack(), [], 'nothing of the failed transaction');
    });

    it('refuses a value its column cannot hold rather than write another', () => {
      assert.throws(() => pg.copyRows('copied', ['i'], ['integer'], [2 ** 31]), RangeError);
      assert.throws(() => pg.copyRows('copied', ['b'], ['bigint'], [2 ** 53]), /not an integer/);
      assert.throws(() => pg.copyRows('copied', ['i'], ['integer'], [1.5]), /not an integer/);
    });
  });
}
