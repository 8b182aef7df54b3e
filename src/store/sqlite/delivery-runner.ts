import type Database from 'better-sqlite3';
import type { DeliverySql, Query, QueryResult, Steps } from '../sql/delivery-sql.js';
import type { WriteThread } from './store-threads.js';

/**
 * SQLite under the delivery repositories' seam (sql/delivery-sql.ts). Statements run on the
 * store's own connection, prepared once; a transaction's steps run synchronously inside one
 * IMMEDIATE transaction, so nothing of this process slips in between.
 */
export function sqliteDeliveryRunner(db: Database.Database, writeThread: WriteThread | null): DeliverySql & { runSteps<T>(steps: Steps<T>): T } {
  const statements = new Map<string, Database.Statement>();
  const run = ({ sql, params }: Query): QueryResult => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    if (statement.reader) {
      const rows = statement.all(...params) as Record<string, unknown>[];
      return { rows, changes: rows.length };
    }
    return { rows: [], changes: statement.run(...params).changes };
  };
  const runSteps = <T>(steps: Steps<T>): T => {
    let step = steps.next();
    while (!step.done) step = steps.next(run(step.value));
    return step.value;
  };
  return {
    name: 'sqlite',
    query: async (query) => run(query),
    transaction: async (steps) => db.transaction(() => runSteps(steps)).immediate(),
    runSteps,
    // An in-memory database has no file for a thread to open: its writes run here.
    background: writeThread ? async ({ sql, params }) => ({ rows: [], changes: await writeThread.run(sql, params) }) : async (query) => run(query),
    time: (value) => new Date(Number(value)),
    timeParam: (at) => at.getTime(),
  };
}
