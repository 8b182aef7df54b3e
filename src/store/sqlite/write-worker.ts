/*
 * The write thread of a SQLite store (WriteThread): its own read-write connection, running
 * writes nobody waits for on the event loop — the delivery ledger's batches — so that
 * better-sqlite3's synchronous work never holds up requests.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { ThreadReply, ThreadTask, WriteStatement } from './store-threads.js';
import { WAL_AUTOCHECKPOINT_PAGES } from './wal-checkpoint.js';

const db = new Database((workerData as { path: string }).path, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
// The server's own connection, the CLI or another process may be writing: wait for it.
db.pragma('busy_timeout = 10000');
// SQLite's default checkpoints after nearly every ledger batch (wal-checkpoint.ts says why not).
db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
const prepared = new Map<string, Database.Statement>();
const statement = (sql: string): Database.Statement => {
  let found = prepared.get(sql);
  if (!found) prepared.set(sql, (found = db.prepare(sql)));
  return found;
};
// A task's statements commit together: each commit costs the WAL its changed pages, and makes
// every connection's key look-ups check again (key-lookup-cache.ts).
const runAll = db.transaction((statements: readonly WriteStatement[]) => statements.map(({ sql, params }) => statement(sql).run(...params).changes));

parentPort!.on('message', (task: ThreadTask & { statements: WriteStatement[] }) => {
  let reply: ThreadReply;
  try {
    reply = { id: task.id, value: runAll.immediate(task.statements) };
  } catch (error) {
    reply = { id: task.id, error: (error as Error).message };
  }
  parentPort!.postMessage(reply);
});
