import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/** A representation of an export: the rendered bytes, or one of their precompressed copies. */
export type Coding = 'identity' | 'gzip' | 'br';

/**
 * What the cache knows of a variant. `id` must change with anything that changes the bytes
 * (http/export-cache.ts hashes the whole ExportVariant into it); `storeId` and `version` let the
 * cache drop a store's entries once a newer price list is published.
 */
export interface CacheKey {
  /** Letters, digits, `-` and `_` only: it names the cache's files. */
  id: string;
  storeId: string;
  version: number;
}

/**
 * A finished cache file: held in memory (small, often asked-for files), or opened — eviction may
 * unlink it now without hurting this reader.
 */
export type OpenCachedFile = {
  size: number;
  /** The Content-Type its render was made with: a hit answers without planning the export again. */
  contentType: string;
} & ({ buffer: Buffer; handle: null } | { buffer: null; handle: FileHandle });

/** A finished cache file by its place under the cache's root. */
export interface LocatedCachedFile {
  /** `<instance directory>/<file>`: letters, digits, `-`, `_` and `.` only. */
  path: string;
  size: number;
  contentType: string;
}

/** How to make a variant's identity bytes; the cache calls `body` at most once per entry. */
export interface RenderSource {
  contentType: string;
  body(): AsyncIterable<Uint8Array>;
}

export interface RenderCacheStats {
  /** Renders started since the cache opened (a second request for a variant does not add one). */
  renders: number;
  /** Finished entries in the index. */
  entries: number;
  /** Bytes on disk: finished files, their compressed copies, and renders in progress. */
  bytes: number;
  maxBytes: number;
  /** Bytes of small files also held in memory. */
  memoryBytes: number;
  /** Finished entries dropped to stay under `maxBytes` since the cache opened (superseded ones not counted). */
  evictions: number;
}

/**
 * Rendered exports, keyed by everything that shapes their bytes, so a variant is rendered once
 * and then served as a file until a new publication supersedes it.
 *
 * Each instance of the service keeps its own cache. That is correct by construction: a key
 * names an immutable price list (its id and version) and a profile revision, so two instances
 * can only ever hold the same bytes under the same key — their compressed copies too, made
 * by the one compressor of compression.ts — and no cross-instance agreement (or invalidation
 * message) is needed. A publication from another process is noticed through the
 * key lookup of the next request (`noteLatest`) or by the warmer.
 */
export interface RenderCache {
  /**
   * The finished file of `coding` for `key`, opened; null when the variant is not rendered yet,
   * is still rendering, or has no copy in that coding yet (`want` then schedules one).
   */
  open(key: CacheKey, coding: Coding): Promise<OpenCachedFile | null>;
  /**
   * Where the finished file of `coding` for `key` lies, relative to the cache's root (CACHE_DIR),
   * without opening it: for a front server that sends it itself (X-Accel-Redirect, README
   * "Large repeats through nginx"). Null as `open` would be. The name is made of a digest of
   * the variant and a counter: no store, key or list appears in it.
   */
  locate(key: CacheKey, coding: Coding): LocatedCachedFile | null;
  /**
   * The identity bytes of `key` as a stream: the finished file, the render in progress
   * (followed as it is written), or a new render of `source`. Concurrent callers share one render.
   */
  read(key: CacheKey, source: RenderSource): Readable;
  /** Asks for a precompressed copy of `coding`, made once in the background when the render is done. */
  want(key: CacheKey, coding: Exclude<Coding, 'identity'>): void;
  /** Renders `key` unless it is cached or rendering; resolves when its file is finished. */
  warm(key: CacheKey, source: RenderSource): Promise<void>;
  /** `version` is the store's latest: entries of older versions of that store are dropped. */
  noteLatest(storeId: string, version: number): void;
  stats(): RenderCacheStats;
  /** Waits for renders in progress, stops compressing, and removes the cache's files. */
  close(): Promise<void>;
}
