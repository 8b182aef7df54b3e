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
}

/** Events remembered to skip a repeat (a catch-up after a reconnect re-reads the log); past it, memory starts again. */
const MAX_REMEMBERED = 10_000;

/**
 * Pre-renders each publication's hot variants before anyone asks, whichever process published it:
 * it is told of publications (store/warming-types.ts's feed), so its cost follows publications,
 * not the number of stores, and it renders nothing at start (an instance that starts renders on
 * first request, followed as it renders, not everything at once). Stores are warmed one after the
 * other, in the order their publications arrived; a store published again while it waits is
 * warmed once, at its newest list.
 */
export class PublicationWarmer {
  private readonly waiting = new Set<string>();
  private readonly seen = new Set<string>();
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(private readonly options: PublicationWarmerOptions) {}

  published(events: readonly PublishedEvent[]): void {
    if (this.stopped) return;
    for (const event of events) {
      const id = `${event.storeId}\u0000${event.seq}`;
      if (this.seen.has(id)) continue;
      if (this.seen.size >= MAX_REMEMBERED) this.seen.clear();
      this.seen.add(id);
      this.waiting.add(event.storeId);
    }
    this.running ??= this.drain();
  }

  /** Resolves when nothing waits or renders (tests, the bench). */
  idle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking publications and waits for the store being warmed, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting.clear();
    await this.running;
  }

  private async drain(): Promise<void> {
    try {
      for (const storeId of this.waiting) {
        if (this.stopped) break;
        // Taken off before warming: a publication arriving meanwhile queues the store again.
        this.waiting.delete(storeId);
        await this.options.warm(storeId).catch((error: unknown) => this.options.onError?.(error));
      }
    } finally {
      this.running = null;
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}
