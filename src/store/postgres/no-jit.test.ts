/**
 * The pool's connections run without PostgreSQL's JIT. The planner guesses a list's rows from
 * price_items' size, so as a fleet's history grew every publication's change recording crossed
 * jit_above_cost and compiled its expressions before running: a publish storm of 5,000 stores
 * took twice as long (bench/RESULTS.md, "2026-12-07, noon").
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../test/support/dialects.js';
import { PostgresDialect } from './dialect.js';

for (const dialect of DIALECTS.filter((name) => name === 'postgres')) {
  describe(`${dialect}: the pool's connections run without JIT`, () => {
    let testDb: TestDatabase;
    let pool: PostgresDialect;
    before(async () => {
      testDb = await createTestDatabase(dialect, { startThreads: false });
      pool = new PostgresDialect(testDb.url);
    });
    after(async () => {
      await pool?.close();
      await testDb?.drop();
    });

    it('jit is off on every pooled connection, whatever the server\'s default', async () => {
      // Asked at once, with no idle connection yet: the pool opens one for each.
      const answers = await Promise.all([1, 2, 3].map(() => pool.query({ sql: "SELECT current_setting('jit') AS jit", params: [] })));
      assert.deepEqual(answers.map((answer) => answer.rows[0].jit), ['off', 'off', 'off']);
    });
  });
}
