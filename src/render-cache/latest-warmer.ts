/** How often the warmer asks for the stores' latest lists: a publication is pre-rendered within this. */
export const WARM_POLL_MS = 3_000;

/** A store's latest price list, as the warmer sees it. */
export interface LatestList {
  storeId: string;
  version: number;
}

export interface WarmerOptions<T extends LatestList> {
  /** The latest list of every store; called every `intervalMs`, so it must be cheap. */
  listLatest(): Promise<T[]>;
  /** Pre-renders one list (the legacy CSV); resolves when it is in the cache. */
  warm(list: T): Promise<void>;
  /** Every list seen on every poll (the cache drops what it supersedes). */
  onLatest?(list: T): void;
  onError?(error: unknown, stage: 'poll' | 'warm'): void;
  intervalMs?: number;
  /**
   * The warmer's timer: runs `run` after `delayMs` and returns a cancel. A timer that never keeps
   * the process alive by default; tests pass one they fire by hand, so no test waits for a poll.
   */
  schedule?: (run: () => void, delayMs: number) => () => void;
}

/** setTimeout, unref'd: a pending poll never keeps the process (or a test run) alive. */
function unrefTimer(run: () => void, delayMs: number): () => void {
  const timer = setTimeout(run, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
}

/**
 * Pre-renders the legacy CSV of each new publication before anyone asks, whichever process
 * published it (the CLI, the admin API, another instance): it polls the stores' latest lists and
 * warms those it has not seen. The first poll only records what is already latest: an instance
 * that starts renders those on first request (followed as it renders), not all at once at boot.
 * One render at a time; a store published twice while waiting is warmed once, at its newest.
 */
export class LatestListWarmer<T extends LatestList> {
  private readonly seen = new Map<string, number>();
  private cancelPoll: (() => void) | null = null;
  private running: Promise<void> | null = null;
  private started = false;
  private stopped = false;
  private baseline = false;

  constructor(private readonly options: WarmerOptions<T>) {}

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(0);
  }

  /** Stops polling for good and waits for the render in progress, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelPoll?.();
    this.cancelPoll = null;
    await this.running;
  }

  /** One poll and the warming it calls for; exposed for tests. */
  async poll(): Promise<void> {
    let lists: T[];
    try {
      lists = await this.options.listLatest();
    } catch (error) {
      this.options.onError?.(error, 'poll');
      return;
    }
    const fresh: T[] = [];
    for (const list of lists) {
      this.options.onLatest?.(list);
      if (list.version > (this.seen.get(list.storeId) ?? 0)) {
        this.seen.set(list.storeId, list.version);
        if (this.baseline) fresh.push(list);
      }
    }
    this.baseline = true;
    for (const list of fresh) {
      if (this.stopped) return;
      await this.options.warm(list).catch((error: unknown) => this.options.onError?.(error, 'warm'));
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.cancelPoll = (this.options.schedule ?? unrefTimer)(() => {
      this.running = this.poll().finally(() => {
        this.running = null;
        this.schedule(this.options.intervalMs ?? WARM_POLL_MS);
      });
    }, delayMs);
  }
}
