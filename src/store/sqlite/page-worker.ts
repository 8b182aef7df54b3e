/*
 * A worker thread of PageWorkers: its own read-only connection to the database file, running
 * the page queries it is sent and posting back each page's one value (a blob of records).
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { registerSheetRowFunctions } from './sheet-row-sql.js';
import type { PageTask, ThreadReply } from './store-threads.js';

const db = new Database((workerData as { path: string }).path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 10000');
// Memory-mapped, as the main connection (dialect.ts): a page query reads a list's pages in order,
// and a connection's own cache (2 MiB) holds few of a large list's, so most come from the OS
// cache again; mapped, they cost no read() and no copy. 100k CSV records on a fresh connection:
// 61.1 → 54.0 ms of SQLite work (bench/RESULTS.md, "2026-11-26, night").
db.pragma('mmap_size = 2147418112');
registerSheetRowFunctions(db);
const statements = new Map<string, Database.Statement>();

parentPort!.on('message', (task: PageTask) => {
  let reply: ThreadReply;
  let transfer: ArrayBuffer[] = [];
  try {
    let statement = statements.get(task.sql);
    if (!statement) {
      statement = db.prepare(task.sql).pluck();
      statements.set(task.sql, statement);
    }
    const value = statement.get(task.params) ?? null;
    reply = { id: task.id, value };
    // A blob comes in a buffer of its own: handing the memory over saves copying ~300 KiB per page.
    if (value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) transfer = [value.buffer as ArrayBuffer];
  } catch (error) {
    reply = { id: task.id, error: (error as Error).message };
  }
  parentPort!.postMessage(reply, transfer);
});
