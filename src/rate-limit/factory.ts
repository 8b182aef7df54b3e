import type { RateCounter } from './interface.js';
import { MemoryCounter } from './memory-counter.js';

/** Redis counters when REDIS_URL is set (shared by every instance), in-memory otherwise. */
export async function openCounter(redisUrl: string | null): Promise<RateCounter> {
  if (redisUrl === null) return new MemoryCounter();
  const { RedisCounter } = await import('./redis-counter.js');
  return RedisCounter.connect(redisUrl);
}
