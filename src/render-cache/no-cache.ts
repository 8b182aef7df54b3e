import { Readable } from 'node:stream';
import type { CacheKey, OpenCachedFile, RenderCache, RenderCacheStats, RenderSource } from './interface.js';

/**
 * No cache: every request renders its own stream, as before the cache existed. For a read-only
 * or full disk, and for tests that want to see the writers' own output on every request.
 */
export class NoRenderCache implements RenderCache {
  private renders = 0;

  async open(): Promise<OpenCachedFile | null> {
    return null;
  }

  locate(): null {
    return null;
  }

  read(_key: CacheKey, source: RenderSource): Readable {
    this.renders++;
    return Readable.from(source.body(), { objectMode: false });
  }

  want(): void {}

  async warm(): Promise<void> {}

  noteLatest(): void {}

  stats(): RenderCacheStats {
    return { renders: this.renders, entries: 0, bytes: 0, maxBytes: 0, memoryBytes: 0, evictions: 0 };
  }

  async close(): Promise<void> {}
}
