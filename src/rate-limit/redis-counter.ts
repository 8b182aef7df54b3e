import { Redis, type Result } from 'ioredis';
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
 * KEYS[1] is counted (INCR, then its expiry) unless KEYS[2] has reached ARGV[1]; returns
 * {KEYS[1]'s count or -1 when not counted, KEYS[2]'s count}. A script, so that the read and the
 * count are one step no other instance's command can come between.
 */
const HIT_UNLESS_OVER = `
local guarded = tonumber(redis.call('GET', KEYS[2]) or '0')
if guarded >= tonumber(ARGV[1]) then return {-1, guarded} end
local hits = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {hits, guarded}
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    hitUnlessOver(hitKey: string, guardKey: string, guardLimit: number, expireMs: number): Result<[number, number], Context>;
  }
}

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
    redis.defineCommand('hitUnlessOver', { numberOfKeys: 2, lua: HIT_UNLESS_OVER });
    await redis.connect().catch(() => undefined);
    return new RedisCounter(redis, now);
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.count(key, windowMs, true);
  }

  async peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.count(key, windowMs, false);
  }

  async hitUnlessOver(hitKey: string, guardKey: string, guardLimit: number, windowMs: number): Promise<{ hit: WindowCount | null; guard: WindowCount }> {
    const { name, resetInMs } = this.window(hitKey, windowMs);
    const [hits, guarded] = await this.redis.hitUnlessOver(name, this.window(guardKey, windowMs).name, guardLimit, windowMs + 1000);
    return { hit: hits < 0 ? null : { count: hits, resetInMs }, guard: { count: guarded, resetInMs } };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /** The Redis key of `key`'s current window (windows are aligned to the clock). */
  private window(key: string, windowMs: number): { name: string; resetInMs: number } {
    const now = this.now();
    const start = now - (now % windowMs);
    return { name: `${key}:${start}`, resetInMs: start + windowMs - now };
  }

  private async count(key: string, windowMs: number, add: boolean): Promise<WindowCount> {
    const { name, resetInMs } = this.window(key, windowMs);
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
    return { count, resetInMs };
  }
}
