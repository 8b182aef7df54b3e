/** A publication as the warmer sees it: a store, and the log position that names the event. */
export interface PublishedEvent {
  storeId: string;
  /** Grows with every publication (the publication log's seq): an event seen twice is warmed once. */
  seq: number;
}

export interface PublicationWarmerOptions {
  /** Pre-renders what the store's latest list needs; resolves when it is in the cache. */
  warm(storeId: string): Promise<void>;
  onError?(error: unknown): void;
  /** Stores warmed at the same time (default 1). */
  storesAtOnce?: number;
}

/** Events remembered to skip a repeat (a catch-up after a reconnect re-reads the log); past it, memory starts again. */
const MAX_REMEMBERED = 10_000;

/**
 * Pre-renders each publication's hot variants before anyone asks, whichever process published it:
 * it is told of publications (store/warming-types.ts's feed), so its cost follows publications,
 * not the number of stores, and it renders nothing at start (an instance that starts renders on
 * first request, followed as it renders, not everything at once). Stores are warmed in the order
 * their publications arrived, `storesAtOnce` at a time; a store published again while it waits is
 * warmed once, at its newest list, and one published while it is being warmed is warmed again
 * after that warm ends (never twice at once: the second would only wait on the first's renders).
 */
export class PublicationWarmer {
  private readonly waiting = new Set<string>();
  /** The stores being warmed, each with its warm. */
  private readonly warming = new Map<string, Promise<void>>();
  private readonly seen = new Set<string>();
  private readonly storesAtOnce: number;
  private stopped = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(private readonly options: PublicationWarmerOptions) {
    this.storesAtOnce = Math.max(1, options.storesAtOnce ?? 1);
  }

  published(events: readonly PublishedEvent[]): void {
    if (this.stopped) return;
    for (const event of events) {
      const id = `${event.storeId}\u0000${event.seq}`;
      if (this.seen.has(id)) continue;
      if (this.seen.size >= MAX_REMEMBERED) this.seen.clear();
      this.seen.add(id);
      this.waiting.add(event.storeId);
    }
    this.startWarms();
  }

  /** Resolves when nothing waits or renders (tests, the bench). */
  idle(): Promise<void> {
    if (this.warming.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking publications and waits for the stores being warmed, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    await Promise.all(this.warming.values());
  }

  /** Starts the oldest waiting stores not already being warmed, up to `storesAtOnce` warms. */
  private startWarms(): void {
    for (const storeId of this.waiting) {
      if (this.stopped || this.warming.size >= this.storesAtOnce) return;
      if (this.warming.has(storeId)) continue;
      // Taken off before warming: a publication arriving meanwhile queues the store again.
      this.waiting.delete(storeId);
      const warm = this.options
        .warm(storeId)
        .catch((error: unknown) => this.options.onError?.(error))
        .finally(() => {
          this.warming.delete(storeId);
          this.startWarms();
          if (this.warming.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
        });
      this.warming.set(storeId, warm);
    }
  }
}
