/*
 * The append thread of a SQLite store (AppendThread): its own read-write connection, inserting
 * the rows of a publication's batches, each batch in one transaction, and answering with the
 * seq and offer_id of each row the unique offer_id index turned away (so the main thread keeps
 * nothing of a batch while it is inserted).
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { ThreadReply, ThreadTask } from './store-threads.js';
import type { DuplicateOffer } from '../types.js';
import { INSERT_ITEM_SQL } from './item-insert.js';

const db = new Database((workerData as { path: string }).path, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
// The CLI or another process may be writing: wait for it instead of failing.
db.pragma('busy_timeout = 10000');
const insert = db.prepare(INSERT_ITEM_SQL);
const appendRows = db.transaction((rows: readonly unknown[][]) => {
  const refused: DuplicateOffer[] = [];
  for (const row of rows) if (insert.run(row).changes === 0) refused.push({ seq: row[1] as number, offer_id: row[2] as string });
  return refused;
});

parentPort!.on('message', (task: ThreadTask & { rows: unknown[][] }) => {
  let reply: ThreadReply;
  try {
    reply = { id: task.id, value: appendRows(task.rows) };
  } catch (error) {
    reply = { id: task.id, error: (error as Error).message };
  }
  parentPort!.postMessage(reply);
});
