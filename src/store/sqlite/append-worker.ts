/*
 * The append thread of a SQLite store (AppendThread): its own read-write connection, inserting
 * the items of publications' batches and answering with the seq and offer_id of each item the
 * unique offer_id index turned away (so the main thread keeps nothing of a batch while it is
 * inserted). It builds each item's row (the `extra` JSON, the `quote_free` bits) itself: that
 * was about a quarter of the main thread's work on an item, and the main thread is the one
 * that limits a publication (bench/RESULTS.md, "2026-11-26, evening").
 *
 * One transaction spans several batches. A publication sends small batches (memory:
 * PUBLISH_BATCH_SIZE in domain/publishing.ts), but each commit writes every index page it
 * dirtied to the WAL again: with offer ids in no particular order, a commit per 2,000-item
 * batch made 1M lean items publish ~1.6× slower than a commit per 20,000 (bench/RESULTS.md,
 * "2026-11-26: publication commits"). So a transaction commits once it holds ROWS_PER_COMMIT
 * rows or has been open MAX_OPEN_MS (a timer, so a stalled upload holds the write lock no
 * longer), and when a draft settles (before its rows are compared, committed or dropped).
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { ThreadData, ThreadReply } from './store-threads.js';
import type { DuplicateOffer, SequencedItem } from '../types.js';
import { INSERT_ITEM_SQL, insertItems } from './item-insert.js';
import { COPY_ROW_COLUMNS, itemCopyRows } from '../item-rows/copy-rows.js';
import { loadRecordsExtension } from './records-extension.js';
import { WAL_AUTOCHECKPOINT_PAGES } from './wal-checkpoint.js';

/** Rows after which the open transaction commits. */
const ROWS_PER_COMMIT = 20_000;
/** The longest the write lock is held for appends: other writers (the ledger, commits) wait meanwhile. */
const MAX_OPEN_MS = 250;

/**
 * Items of one draft, and rows the native reader made of others (item-rows/: the COPY text
 * format, `count` rows in each); `settle` carries the count the main thread sent.
 */
export type AppendTask = { id: number; draft: number; items: SequencedItem[]; rows?: { bytes: Uint8Array; count: number }[] } | { id: number; settle: number; sent: number };

const { path, recordsExtension } = workerData as ThreadData;
const db = new Database(path, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
// The CLI or another process may be writing: wait for it instead of failing.
db.pragma('busy_timeout = 10000');
// SQLite's default checkpoints after every publication commit (wal-checkpoint.ts says why not).
db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
const insert = db.prepare(INSERT_ITEM_SQL);
/**
 * Rows in the COPY text format, inserted by the records extension's price_export_copy_rows
 * (native/copy_rows.c) in one statement: a batch costs no JavaScript a row. Only with the
 * extension, which the main thread then says (SqliteItems.rowReader).
 */
const rowStatements = recordsExtension && loadRecordsExtension(db, recordsExtension)
  ? {
      inOrder: db.prepare(`INSERT OR IGNORE INTO price_items (${COPY_ROW_COLUMNS}) SELECT ${COPY_ROW_COLUMNS} FROM price_export_copy_rows(?)`),
      // Of two equal ids the first in seq order stays, wherever its row stood in the batch.
      bySeq: db.prepare(`INSERT OR IGNORE INTO price_items (${COPY_ROW_COLUMNS}) SELECT ${COPY_ROW_COLUMNS} FROM price_export_copy_rows(?) ORDER BY seq`),
      refused: db.prepare(
        `SELECT r.seq, r.offer_id FROM price_export_copy_rows(?) r
          WHERE NOT EXISTS (SELECT 1 FROM price_items p WHERE p.price_list_id = r.price_list_id AND p.seq = r.seq) ORDER BY r.seq`,
      ),
    }
  : null;

/** Rows received per draft not yet settled, committed or not: a settle that finds fewer knows rows were lost. */
const received = new Map<number, number>();
/** Drafts whose rows a failed transaction took with it, and why. */
const lost = new Map<number, string>();
/** The drafts with rows in the open transaction, its row count and its timer; null: none open. */
let open: { drafts: Set<number>; rows: number; timer: NodeJS.Timeout } | null = null;

function begin(): NonNullable<typeof open> {
  db.exec('BEGIN IMMEDIATE');
  return (open = { drafts: new Set(), rows: 0, timer: setTimeout(commit, MAX_OPEN_MS) });
}

function commit(): void {
  if (!open) return;
  const committing = open;
  open = null;
  clearTimeout(committing.timer);
  try {
    db.exec('COMMIT');
  } catch (error) {
    fail(committing, error);
  }
}

/** Rolls the transaction back; every draft with rows in it is told at its settle. */
function fail(failed: NonNullable<typeof open>, error: unknown): void {
  if (open === failed) open = null;
  clearTimeout(failed.timer);
  if (db.inTransaction) db.exec('ROLLBACK');
  for (const draft of failed.drafts) lost.set(draft, `rows of publication draft ${draft} were lost: ${(error as Error).message}`);
}

function append(draft: number, items: readonly SequencedItem[], rows: readonly { bytes: Uint8Array; count: number }[] = []): DuplicateOffer[] {
  const count = rows.reduce((sum, r) => sum + r.count, items.length);
  received.set(draft, (received.get(draft) ?? 0) + count);
  const transaction = open ?? begin();
  transaction.drafts.add(draft);
  let refused: DuplicateOffer[];
  try {
    refused = rows.length === 0 ? insertItems(insert, draft, items) : insertRows(draft, items, rows, count);
  } catch (error) {
    fail(transaction, error);
    throw error;
  }
  transaction.rows += count;
  if (transaction.rows >= ROWS_PER_COMMIT) commit();
  const why = lost.get(draft);
  if (why) throw new Error(why);
  return refused;
}

/** Inserts the native reader's rows with the items' own (copy-rows.ts); answers the rows the unique offer_id index turned away. */
function insertRows(draft: number, items: readonly SequencedItem[], rows: readonly { bytes: Uint8Array; count: number }[], count: number): DuplicateOffer[] {
  if (rowStatements === null) throw new Error('rows came without the records extension to insert them');
  const data = Buffer.concat([itemCopyRows(draft, items), ...rows.map((r) => r.bytes)]);
  // The reader's rows come in seq order; the items' rows go first, so then only a sort keeps the order.
  const inserted = (items.length === 0 ? rowStatements.inOrder : rowStatements.bySeq).run(data).changes;
  if (inserted === count) return [];
  return rowStatements.refused.all(data) as DuplicateOffer[];
}

/** Commits what the draft sent; fails if any of it is gone (a failed transaction, or a thread that died and was replaced). */
function settle(draft: number, sent: number): null {
  commit();
  const why = lost.get(draft);
  const got = received.get(draft) ?? 0;
  lost.delete(draft);
  received.delete(draft);
  if (why) throw new Error(why);
  if (got !== sent) throw new Error(`the append thread holds ${got} of the ${sent} rows sent for publication draft ${draft} (it was restarted)`);
  return null;
}

parentPort!.on('message', (task: AppendTask) => {
  let reply: ThreadReply;
  try {
    reply = { id: task.id, value: 'settle' in task ? settle(task.settle, task.sent) : append(task.draft, task.items, task.rows) };
  } catch (error) {
    reply = { id: task.id, error: (error as Error).message };
  }
  parentPort!.postMessage(reply);
});
