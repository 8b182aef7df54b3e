import type { Clock, RateCounter, WindowCount } from './interface.js';

/** One instance's counters. Windows are aligned to the clock so every instance agrees on them. */
export class MemoryCounter implements RateCounter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private sweepAt = 0;

  constructor(private readonly now: Clock = Date.now) {}

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.count(key, windowMs, 1);
  }

  async peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.count(key, windowMs, 0);
  }

  async hitUnlessOver(hitKey: string, guardKey: string, guardLimit: number, windowMs: number): Promise<{ hit: WindowCount | null; guard: WindowCount }> {
    const guard = this.count(guardKey, windowMs, 0);
    return { hit: guard.count >= guardLimit ? null : this.count(hitKey, windowMs, 1), guard };
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  private count(key: string, windowMs: number, add: number): WindowCount {
    const now = this.now();
    const start = now - (now % windowMs);
    if (now >= this.sweepAt) this.sweep(start, windowMs);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      window = { start, count: 0 };
      if (add > 0) this.windows.set(key, window);
    }
    window.count += add;
    return { count: window.count, resetInMs: start + windowMs - now };
  }

  /** Drops finished windows so a stream of distinct clients cannot grow the map forever. */
  private sweep(start: number, windowMs: number): void {
    for (const [key, window] of this.windows) if (window.start < start) this.windows.delete(key);
    this.sweepAt = start + windowMs;
  }
}
