import { Redis } from 'ioredis';
import type { RateCounter, WindowCount } from './interface.js';

/**
 * Counters shared by every instance: one Redis key per (name, window), INCR then PEXPIRE in one
 * round trip. Windows are aligned to the clock, so the instances agree on them.
 */
export class RedisCounter implements RateCounter {
  private constructor(private readonly redis: Redis) {}

  static async connect(url: string): Promise<RedisCounter> {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    await redis.connect();
    return new RedisCounter(redis);
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.count(key, windowMs, true);
  }

  async peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.count(key, windowMs, false);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private async count(key: string, windowMs: number, add: boolean): Promise<WindowCount> {
    const now = Date.now();
    const start = now - (now % windowMs);
    const name = `price-export:rl:${key}:${start}`;
    let count: number;
    if (add) {
      const result = await this.redis.multi().incr(name).pexpire(name, windowMs + 1000).exec();
      count = Number(result?.[0]?.[1] ?? 0);
    } else {
      count = Number((await this.redis.get(name)) ?? 0);
    }
    return { count, resetInMs: start + windowMs - now };
  }
}
