/*
 * A worker thread of PageWorkers: its own read-only connection to the database file, running
 * the page queries it is sent and posting back each page's one value (a blob of records).
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { registerSheetRowFunctions } from './sheet-row-sql.js';
import { loadRecordsExtension } from './records-extension.js';
import type { PageTask, ThreadData, ThreadReply } from './store-threads.js';

const { path, recordsExtension } = workerData as ThreadData;
const db = new Database(path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 10000');
// Not memory-mapped (nor, since 4f64e09, is the main connection): mapped, every page of a list
// an export reads counts in the process's RSS (+166–219 MiB of file-backed pages for a 1M-item
// export), for SQLite work ~11 % shorter alone and no difference over HTTP beyond noise
// (bench/RESULTS.md, "2026-11-26, later night").
// And with SQLite's own default page cache (2 MB, as the sqlite3 CLI has it), not
// better-sqlite3's 16 MB: every page the cache holds is memory the thread allocated, so a fresh
// server's first 100k export filled 1,000–2,000 pages of memory new to the process with it, dear
// where a page fault costs ~12 µs; the same list's next renders in other formats were no slower
// with the smaller cache (bench/RESULTS.md, "2026-12-02, night").
db.pragma('cache_size = -2000');
registerSheetRowFunctions(db);
// Given only when the main connection loaded it (dialect.ts), so it loads here too; if it did
// not, a query that calls it fails with "no such function" (an error, never other bytes).
const extensionLoaded = recordsExtension ? loadRecordsExtension(db, recordsExtension) : false;
// Said after each page's value is copied out (and once now, which turns the kept room on): the
// C aggregates build the next page in the same memory instead of memory new to the process
// (native/records_page.c, "A page thread's room").
const roomTaken = extensionLoaded ? db.prepare('SELECT price_export_room_taken()') : null;
roomTaken?.get();
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
  } finally {
    // better-sqlite3 copied the value into its own Buffer and reset the statement.
    roomTaken?.get();
  }
  parentPort!.postMessage(reply, transfer);
});
