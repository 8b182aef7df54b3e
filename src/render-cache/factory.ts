import { DiskRenderCache, type CacheLogger, type DiskRenderCacheOptions } from './disk-cache.js';
import type { RenderCache } from './interface.js';
import { CacheDirectoryRefused } from './private-directory.js';
import { NoRenderCache } from './no-cache.js';

/** What opening the cache takes besides its logger: its root (CACHE_DIR), its bound (CACHE_MAX_MB). */
export type CacheOptions = Omit<DiskRenderCacheOptions, 'log'>;

/** The disk cache under `options.root` (CACHE_DIR) or the OS temp dir; without a writable, private one, no cache (and a warning), not a failed start. */
export function openRenderCache(log: CacheLogger, options: CacheOptions = {}): RenderCache {
  try {
    return new DiskRenderCache({ ...options, log });
  } catch (error) {
    const reason = error instanceof CacheDirectoryRefused ? error.message : undefined;
    log.warn({ err: { type: (error as Error).name, code: (error as NodeJS.ErrnoException).code }, reason }, 'render cache unavailable: every export renders on request');
    return new NoRenderCache();
  }
}
