import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/*
 * Worker threads that run page queries off the event loop. The records of a large CSV are
 * built by SQLite (delimited-sql.ts) a page at a time; on the main thread every page held up
 * every other request for its ~5 ms, and one thread could not build them fast enough for the
 * "first CSV ≥ 3× csv-stringify" goal (bench/RESULTS.md). Pages of a list are independent (a
 * published list never changes), so the workers build them side by side and the caller puts
 * them back in order.
 */

export interface PageTask {
  id: number;
  sql: string;
  params: Record<string, unknown>;
}

export type PageReply = { id: number; value: unknown } | { id: number; error: string };

interface Pending {
  task: PageTask;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * Built, page-worker.js sits beside this file. Run through tsx (the tests), this file is .ts and
 * a worker thread does not inherit tsx's loader, so the worker loads page-worker.ts through
 * tsx's own API.
 */
function startThread(workerData: { path: string }): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./page-worker.js', import.meta.url), { workerData });
  const script = JSON.stringify(new URL('./page-worker.ts', import.meta.url).href);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${tsx}).then((tsx) => tsx.tsImport(${script}, ${JSON.stringify(import.meta.url)}))`, { eval: true, workerData });
}

/** Threads started at most: page queries read, so more threads than cores only queue. */
const MAX_THREADS = 4;

export class PageWorkers {
  readonly size = Math.max(1, Math.min(MAX_THREADS, availableParallelism()));
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  private started = 0;
  private nextId = 0;
  private closed = false;

  constructor(private readonly path: string) {}

  /** The single value of a one-row, one-column query, run on a worker thread (a blob comes back as a Buffer). */
  run(sql: string, params: Record<string, unknown>): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ task: { id: this.nextId++, sql, params }, resolve, reject });
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
      const pending = this.queue.shift()!;
      this.busy.set(worker, pending);
      // A busy thread keeps the process alive (a CLI command waits for its pages); an idle one does not.
      worker.ref();
      worker.postMessage(pending.task);
    }
  }

  private spawn(): Worker | null {
    if (this.started >= this.size) return null;
    this.started++;
    const worker = startThread({ path: this.path });
    worker.unref();
    worker.on('message', (reply: PageReply) => {
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
    worker.on('exit', (code) => this.lose(worker, new Error(`a page worker stopped (exit code ${code})`)));
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
