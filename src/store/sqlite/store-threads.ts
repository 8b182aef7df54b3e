import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { DuplicateOffer, ItemRows, SequencedItem } from '../types.js';

/*
 * Worker threads of a SQLite store, each with its own connection to the database file, so
 * that SQLite's work does not hold up the event loop (better-sqlite3 is synchronous):
 * - page threads (page-worker.ts, read-only, one per core) run the page queries of exports:
 *   the records of a CSV, the items of any other format, several pages side by side (a
 *   published list never changes; the caller puts the pages back in order). One thread could
 *   not build them fast enough for the "first CSV ≥ 3× csv-stringify" goal (bench/RESULTS.md);
 * - the append thread (append-worker.ts) inserts a publication's batches while the main thread
 *   reads and validates the next one.
 */

/** A message to a store thread; the thread answers it with a ThreadReply of the same id. */
export interface ThreadTask {
  id: number;
  [field: string]: unknown;
}

export type ThreadReply = { id: number; value: unknown } | { id: number; error: string };

/** A statement for the write thread (write-worker.ts). */
export interface WriteStatement {
  sql: string;
  params: readonly unknown[];
}

/** A page query: one row, one column (page-worker.ts). */
export interface PageTask extends ThreadTask {
  sql: string;
  params: Record<string, unknown>;
}

/** A task's promise, settled by its reply. */
interface Waiting {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** A task not yet sent to a thread. */
interface Pending extends Waiting {
  task: ThreadTask;
}

/** What a store thread is started with: its database file and, for page threads, the records extension to load (records-extension.ts). */
export interface ThreadData {
  path: string;
  recordsExtension?: string | null;
}

/** The scripts a store thread runs, each with its own connection to the database file. */
type ThreadScript = 'page-worker' | 'append-worker' | 'write-worker';

/**
 * Built, the thread's script sits beside this file as .js. Run through tsx (the tests), this
 * file is .ts and a worker thread does not inherit tsx's loader, so the thread loads the
 * TypeScript through tsx's own API.
 */
function startThread(script: ThreadScript, workerData: ThreadData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${script}.js`, import.meta.url), { workerData });
  const source = JSON.stringify(new URL(`./${script}.ts`, import.meta.url).href);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${tsx}).then((tsx) => tsx.tsImport(${source}, ${JSON.stringify(import.meta.url)}))`, { eval: true, workerData });
}

/** Page threads started at most: page queries read, so more threads than cores only queue. */
const MAX_PAGE_THREADS = 4;

/**
 * Up to `size` threads running one script, each task on the first idle one, answers in any
 * order (the caller orders them).
 */
export class StoreThreads {
  private readonly idle: Worker[] = [];
  /** Once sent, a task is not kept here: postMessage copied it, and an append's rows are a batch of a publication. */
  private readonly busy = new Map<Worker, Waiting>();
  private readonly queue: Pending[] = [];
  private started = 0;
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly data: ThreadData,
    private readonly script: ThreadScript,
    readonly size: number,
  ) {}

  /** Sends a task (its id is set here) to the next idle thread; a blob in the answer comes back as a Buffer. */
  protected post(task: Omit<ThreadTask, 'id'>): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ task: { ...task, id: this.nextId++ }, resolve, reject });
      this.dispatch();
    });
  }

  /** Starts every thread now (idle ones do not keep the process alive), so the first export does not wait for them. */
  start(): void {
    for (let worker = this.spawn(); worker && !this.closed; worker = this.spawn()) this.idle.push(worker);
    this.dispatch();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error('the store is closed'));
    const all = [...this.idle, ...this.busy.keys()];
    this.idle.length = 0;
    await Promise.all(all.map((worker) => worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? this.spawn();
      if (!worker) return;
      const { task, resolve, reject } = this.queue.shift()!;
      this.busy.set(worker, { resolve, reject });
      // A busy thread keeps the process alive (a CLI command waits for its pages); an idle one does not.
      worker.ref();
      worker.postMessage(task);
    }
  }

  private spawn(): Worker | null {
    if (this.started >= this.size) return null;
    this.started++;
    const worker = startThread(this.script, this.data);
    worker.unref();
    worker.on('message', (reply: ThreadReply) => {
      const pending = this.busy.get(worker);
      this.busy.delete(worker);
      worker.unref();
      if (!this.closed) this.idle.push(worker);
      if (pending) {
        if ('error' in reply) pending.reject(new Error(reply.error));
        else pending.resolve(reply.value instanceof Uint8Array ? Buffer.from(reply.value.buffer, reply.value.byteOffset, reply.value.byteLength) : reply.value);
      }
      this.dispatch();
    });
    worker.on('error', (error) => this.lose(worker, error));
    worker.on('exit', (code) => this.lose(worker, new Error(`a store thread stopped (exit code ${code})`)));
    return worker;
  }

  /** A thread that died: its task fails, and a new thread may take its place. */
  private lose(worker: Worker, error: Error): void {
    const pending = this.busy.get(worker);
    const wasKnown = pending !== undefined || this.idle.includes(worker);
    this.busy.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
    if (wasKnown) this.started--;
    pending?.reject(error);
    if (!this.closed) this.dispatch();
  }
}

/** The page threads: one per core, at most MAX_PAGE_THREADS, read-only connections. */
export class PageWorkers extends StoreThreads {
  constructor(path: string, recordsExtension: string | null) {
    super({ path, recordsExtension }, 'page-worker', Math.max(1, Math.min(MAX_PAGE_THREADS, availableParallelism())));
  }

  /** The single value of a one-row, one-column query, run on a page thread. */
  run(sql: string, params: Record<string, unknown>): Promise<unknown> {
    return this.post({ sql, params });
  }
}

/**
 * The thread a publication's rows are inserted on (append-worker.ts), so that SQLite writes a
 * batch while the main thread reads and validates the next (bench/RESULTS.md, "Publishing").
 */
export class AppendThread extends StoreThreads {
  /** `recordsExtension`: loaded on the thread, to insert the native reader's rows (records-extension.ts). */
  constructor(path: string, recordsExtension: string | null) {
    super({ path, recordsExtension }, 'append-worker', 1);
  }

  /** Inserts one draft's items and rows; answers each duplicate (its seq and offer_id). Committed later: see settle. */
  append(draft: number, items: readonly SequencedItem[], rows: readonly ItemRows[] = []): Promise<DuplicateOffer[]> {
    return this.post(rows.length === 0 ? { draft, items } : { draft, items, rows }) as Promise<DuplicateOffer[]>;
  }

  /** Commits the draft's rows (`sent` of them were appended); fails if any was lost on the way. */
  async settle(draftId: number, sent: number): Promise<void> {
    await this.post({ settle: draftId, sent });
  }
}

/** The thread background writes run on (write-worker.ts): the delivery ledger's batches. */
export class WriteThread extends StoreThreads {
  constructor(path: string) {
    super({ path }, 'write-worker', 1);
  }

  /** Runs write statements in one transaction; answers the rows each changed. */
  run(statements: readonly WriteStatement[]): Promise<number[]> {
    return this.post({ statements }) as Promise<number[]>;
  }
}
