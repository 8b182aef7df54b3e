/**
 * Fixed-window counters for the limits of CONTRACT §8. The in-memory counter serves one
 * instance; the Redis one (REDIS_URL) is shared by every instance.
 */
export interface WindowCount {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetInMs: number;
}

export interface RateCounter {
  /** Counts one hit for `key` in the current window of `windowMs`. */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** The current count without adding to it. */
  peek(key: string, windowMs: number): Promise<WindowCount>;
  /**
   * In one atomic step (one Redis round trip): reads `guardKey`'s count and, unless it has reached
   * `guardLimit`, counts one hit for `hitKey` (`hit` is null when it was not counted).
   */
  hitUnlessOver(hitKey: string, guardKey: string, guardLimit: number, windowMs: number): Promise<{ hit: WindowCount | null; guard: WindowCount }>;
  close(): Promise<void>;
}

/**
 * Milliseconds since the epoch: `Date.now` in the service, a clock the test moves by hand in
 * tests, so a test never waits for a minute boundary (CONTRACT §8 windows are clock-aligned).
 */
export type Clock = () => number;
