import { Redis } from 'ioredis';
import type { Clock, RateCounter, WindowCount } from './interface.js';

/**
 * A Redis that is gone must cost a request milliseconds, not seconds: the caller (the request
 * gate) fails open when a count cannot be had, and that only helps if the failure is quick.
 * So: no offline queue (a command while disconnected fails at once instead of waiting for a
 * reconnect), a short command timeout (a Redis that accepts but never answers), and endless
 * background reconnection so counting resumes by itself when Redis is back.
 */
const COMMAND_TIMEOUT_MS = 500;
const CONNECT_TIMEOUT_MS = 2_000;
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * Counters shared by every instance: one Redis key per (name, window), INCR then PEXPIRE in one
 * MULTI (one round trip, atomic). Windows are aligned to the clock, so the instances agree on them.
 */
export class RedisCounter implements RateCounter {
  private constructor(private readonly redis: Redis, private readonly now: Clock) {}

  /**
   * Connects, waiting at most CONNECT_TIMEOUT_MS. A Redis unreachable at start does not stop the
   * start: the client keeps reconnecting in the background and, until it answers, the gate admits
   * requests uncounted and logs so (the same rule as an outage mid-run; a restart during a Redis
   * blip must not take the whole service down).
   */
  static async connect(url: string, options: { keyPrefix?: string; now?: Clock } = {}): Promise<RedisCounter> {
    const { keyPrefix = 'price-export:rl:', now = Date.now } = options;
    const redis = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: CONNECT_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
      keyPrefix,
    });
    // ioredis reports every failed reconnect as an 'error' event and prints unhandled ones to the
    // console; the gate logs the outage once through the service's logger instead.
    redis.on('error', () => {});
    await redis.connect().catch(() => undefined);
    return new RedisCounter(redis, now);
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
    const now = this.now();
    const start = now - (now % windowMs);
    const name = `${key}:${start}`;
    let count: number;
    if (add) {
      // The key outlives its window by a second so a late INCR near the boundary cannot recreate it without a TTL.
      const result = await this.redis.multi().incr(name).pexpire(name, windowMs + 1000).exec();
      const [incrError, value] = result?.[0] ?? [new Error('Redis MULTI was discarded'), null];
      if (incrError) throw incrError;
      count = Number(value);
    } else {
      count = Number((await this.redis.get(name)) ?? 0);
    }
    return { count, resetInMs: start + windowMs - now };
  }
}
