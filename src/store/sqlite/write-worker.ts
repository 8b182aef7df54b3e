/*
 * The write thread of a SQLite store (WriteThread): its own read-write connection, running
 * writes nobody waits for on the event loop — the delivery ledger's batches — so that
 * better-sqlite3's synchronous work never holds up requests.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { ThreadReply, ThreadTask } from './store-threads.js';

const db = new Database((workerData as { path: string }).path, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
// The server's own connection, the CLI or another process may be writing: wait for it.
db.pragma('busy_timeout = 10000');
const statements = new Map<string, Database.Statement>();

parentPort!.on('message', (task: ThreadTask & { sql: string; params: unknown[] }) => {
  let reply: ThreadReply;
  try {
    let statement = statements.get(task.sql);
    if (!statement) {
      statement = db.prepare(task.sql);
      statements.set(task.sql, statement);
    }
    reply = { id: task.id, value: statement.run(...task.params).changes };
  } catch (error) {
    reply = { id: task.id, error: (error as Error).message };
  }
  parentPort!.postMessage(reply);
});
