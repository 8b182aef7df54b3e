import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readdirSync } from 'node:fs';
import { open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createCompressor } from './compression.js';
import { ensurePrivateDirectory, PRIVATE_FILE_MODE } from './private-directory.js';
import { FollowStream, isDiskFailure, type FollowedFile } from './follow-stream.js';
import type { CacheKey, Coding, LocatedCachedFile, OpenCachedFile, RenderCache, RenderCacheStats, RenderSource } from './interface.js';
import { DEFAULT_CACHE_MAX_MB } from '../config/config.js';

/** Default bound of one instance's cache (CACHE_MAX_MB's): a few hundred variants of a 10k-item list, or ten of a 1M-item one. */
export const DEFAULT_MAX_BYTES = DEFAULT_CACHE_MAX_MB * 1024 * 1024;

/**
 * Small files are also kept in memory, up to this many bytes in all: a repeat download of a
 * small list is then one socket write, with no file to open, read and close (bench/RESULTS.md,
 * "repeat requests/s"). A 10k-item CSV is ~0.7 MB, so this holds the hot set of ~90 such lists.
 */
export const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
/** Files above this size are always streamed from disk. */
export const DEFAULT_MEMORY_FILE_MAX = 2 * 1024 * 1024;

/** Where instances keep their caches by default: one fresh subdirectory each, removed on close. */
export const DEFAULT_CACHE_ROOT = join(tmpdir(), 'price-export-cache');

/** Bytes gathered per write of a render to its file (the size of the chunks the text writers yield). */
const WRITE_BYTES = 64 * 1024;
/**
 * A rendering entry's last writes kept in memory for its followers, up to this many bytes (the
 * last write always). The request that started a render falls a write or two behind it while
 * the socket drains a page (~1 MB of JSON); with only the last write in memory it read the
 * writes in between back from the file, into 64 KiB buffers of memory new to the process: ~1,750
 * page faults of a fresh server's first 100k JSON (bench/RESULTS.md, "2026-12-02, night"). The
 * writes are in memory anyway until they are collected; this keeps them reachable a little longer.
 */
const RECENT_BYTES = 4 * 1024 * 1024;

type Copy = Exclude<Coding, 'identity'>;
const SUFFIX: Record<Copy, string> = { gzip: '.gz', br: '.br' };

/** A structured logger (pino's shape) for renders and failures; the key is never in it. */
export interface CacheLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface DiskRenderCacheOptions {
  /** The parent of this instance's cache directory (default {@link DEFAULT_CACHE_ROOT}). */
  root?: string;
  /** Bound on the bytes on disk; least recently used entries go first (default {@link DEFAULT_MAX_BYTES}). */
  maxBytes?: number;
  /** Bound on the small files also held in memory (default {@link DEFAULT_MEMORY_BYTES}; 0: none). */
  memoryBytes?: number;
  log?: CacheLogger;
  /** The clock of the disk-full back-off (a seam for tests). */
  now?: () => number;
}

/** After the cache's disk fails, renders skip it this long before it is tried again. */
export const DISK_FAILURE_BYPASS_MS = 30_000;

class Entry implements FollowedFile {
  state: 'rendering' | 'ready' | 'failed' = 'rendering';
  /** The renderer has created the temp file: followers may open it. */
  created = false;
  written = 0;
  /** The last writes while rendering (RECENT_BYTES), oldest first. */
  private recent: Array<{ offset: number; data: Uint8Array }> = [];
  private recentBytes = 0;
  error: Error | null = null;
  /** Bytes this entry holds on disk (the identity file so far, plus finished copies). */
  bytes = 0;
  readonly copies = new Map<Copy, number>();
  /** Representations also held in memory, and those being read into it. */
  readonly memory = new Map<Coding, Buffer>();
  readonly loading = new Set<Coding>();
  readonly wanted = new Set<Copy>();
  /** A newer list of the store was published: serve the followers, keep nothing. */
  superseded = false;
  dropped = false;
  done: Promise<void> = Promise.resolve();
  private wakers: Array<() => void> = [];

  constructor(readonly key: CacheKey, readonly contentType: string, readonly file: string, readonly temp: string) {}

  path(coding: Coding): string {
    return coding === 'identity' ? this.file : this.file + SUFFIX[coding];
  }

  recentAt(offset: number): Uint8Array | null {
    for (const write of this.recent) if (write.offset === offset) return write.data;
    return null;
  }

  /** A write of the render, appended to the file: kept for the followers, the oldest let go past RECENT_BYTES. */
  noteWrite(data: Uint8Array): void {
    this.recent.push({ offset: this.written, data });
    this.recentBytes += data.byteLength;
    this.written += data.byteLength;
    while (this.recent.length > 1 && this.recentBytes > RECENT_BYTES) this.recentBytes -= this.recent.shift()!.data.byteLength;
  }

  /** The render ended: followers read the file from now on. */
  forgetRecent(): void {
    this.recent = [];
    this.recentBytes = 0;
  }

  progress(): Promise<void> {
    return new Promise((resolve) => this.wakers.push(resolve));
  }

  wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }

  async openForReading(): Promise<FileHandle> {
    while (this.state === 'rendering' && !this.created) await this.progress();
    if (this.state === 'failed') throw this.error ?? new Error('the render failed');
    // The rename may land between this check and the open: the temp name is then gone (ENOENT),
    // and the follower asks again, finding the entry ready under its final name.
    try {
      return await open(this.state === 'rendering' ? this.temp : this.file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && this.state === 'ready' && !this.dropped) return open(this.file, 'r');
      throw error;
    }
  }
}

/**
 * The render cache on local disk (see RenderCache for why each instance keeps its own).
 *
 * - A render writes `<name>.tmp` and renames it to `<name>` when complete, so a reader of a
 *   finished file never sees a partial one; requests arriving meanwhile follow the temp file as it grows
 *   (FollowStream). That is the single flight: one render per variant however many requests,
 *   first byte as soon as the render yields it, and memory flat whatever the readers' speeds.
 * - gzip and br copies are made once, on the first request that wants them, one at a time in
 *   the background (the request itself is compressed on the fly meanwhile), by the one
 *   compressor of compression.ts: the copy is byte for byte what the on-the-fly stream sent,
 *   so both answer under one strong ETag.
 * - Total bytes stay under `maxBytes`: finished entries are evicted least recently used first.
 *   A render in progress counts as it grows but is never evicted, so only a single render larger
 *   than the whole bound can overshoot it, and it is dropped when it finishes.
 * - Small files are also held in memory (DEFAULT_MEMORY_BYTES in all), so a repeat download of
 *   a small list is one socket write.
 */
export class DiskRenderCache implements RenderCache {
  readonly dir: string;
  private readonly maxBytes: number;
  private readonly memoryMax: number;
  private memoryBytes = 0;
  private readonly log: CacheLogger | undefined;
  /** Map order is recency order: a hit moves its entry to the end; eviction starts at the front. */
  private readonly entries = new Map<string, Entry>();
  /**
   * Each store's entries, so that a store's new version drops its old entries without a pass
   * over every store's: in a storm of 5,000 stores republished, that pass was 3.5 % of the main
   * thread's busy time (bench/figures/fleet-scale.ts --profile, bench/RESULTS.md 2026-11-28).
   */
  private readonly byStore = new Map<string, Set<Entry>>();
  private readonly latest = new Map<string, number>();
  private readonly rendering = new Set<Promise<void>>();
  /** File removals of dropped entries still under way (idle() waits for them). */
  private readonly removing = new Set<Promise<unknown>>();
  private readonly copyQueue: Array<{ entry: Entry; coding: Copy }> = [];
  private copying: Promise<void> | null = null;
  private readonly stopCopies = new AbortController();
  private bytes = 0;
  private renders = 0;
  private evictions = 0;
  private serial = 0;
  private closed = false;
  /** Until then new renders skip the disk (it was full); see noteDiskFailure. */
  private bypassUntil = 0;
  /** The disk failure was logged and no render has succeeded since: it is not logged again. */
  private diskFailureLogged = false;
  private readonly now: () => number;

  constructor(options: DiskRenderCacheOptions = {}) {
    this.now = options.now ?? Date.now;
    const root = options.root ?? DEFAULT_CACHE_ROOT;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.memoryMax = options.memoryBytes ?? DEFAULT_MEMORY_BYTES;
    this.log = options.log;
    ensurePrivateDirectory(root);
    removeAbandoned(root);
    // The pid in the name lets a later instance tell a crashed one's directory from a live one's.
    this.dir = join(root, `${process.pid}-${randomBytes(4).toString('hex')}`);
    mkdirSync(this.dir, { mode: 0o700 });
  }

  async open(key: CacheKey, coding: Coding): Promise<OpenCachedFile | null> {
    const entry = this.entries.get(key.id);
    if (!entry || entry.state !== 'ready') return null;
    const size = coding === 'identity' ? entry.written : entry.copies.get(coding);
    if (size === undefined) return null;
    this.touch(entry);
    const buffer = entry.memory.get(coding);
    if (buffer) return { buffer, handle: null, size, contentType: entry.contentType };
    // The first hit of a small file reads it into memory for the next ones; this one streams it.
    if (size <= Math.min(DEFAULT_MEMORY_FILE_MAX, this.memoryMax)) void this.loadIntoMemory(entry, coding);
    try {
      return { buffer: null, handle: await open(entry.path(coding), 'r'), size, contentType: entry.contentType };
    } catch (error) {
      // Evicted between the lookup and the open: a miss.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  locate(key: CacheKey, coding: Coding): LocatedCachedFile | null {
    const entry = this.entries.get(key.id);
    if (!entry || entry.state !== 'ready') return null;
    const size = coding === 'identity' ? entry.written : entry.copies.get(coding);
    if (size === undefined) return null;
    this.touch(entry);
    return { path: `${basename(this.dir)}/${basename(entry.path(coding))}`, size, contentType: entry.contentType };
  }

  read(key: CacheKey, source: RenderSource): Readable {
    // Closed, or its disk full a moment ago: the render streams straight to the client.
    if (this.closed || this.now() < this.bypassUntil) return Readable.from(source.body(), { objectMode: false });
    return new FollowStream(this.acquire(key, source), () => this.acquire(key, source), () => source.body());
  }

  want(key: CacheKey, coding: Copy): void {
    const entry = this.entries.get(key.id);
    if (!entry || entry.copies.has(coding) || entry.wanted.has(coding)) return;
    entry.wanted.add(coding);
    if (entry.state === 'ready') this.queueCopy(entry, coding);
  }

  async warm(key: CacheKey, source: RenderSource): Promise<void> {
    if (this.closed) return;
    await this.acquire(key, source).done;
  }

  noteLatest(storeId: string, version: number): void {
    if (version <= (this.latest.get(storeId) ?? 0)) return;
    this.latest.set(storeId, version);
    for (const entry of [...(this.byStore.get(storeId) ?? [])]) {
      if (entry.key.version >= version) continue;
      if (entry.state === 'ready') this.drop(entry);
      else entry.superseded = true;
    }
  }

  stats(): RenderCacheStats {
    let entries = 0;
    for (const entry of this.entries.values()) if (entry.state === 'ready') entries++;
    return { renders: this.renders, entries, bytes: this.bytes, maxBytes: this.maxBytes, memoryBytes: this.memoryBytes, evictions: this.evictions };
  }

  /**
   * Resolves once the renders under way have finished and been kept or dropped, and dropped
   * files are gone from the disk: what a test
   * awaits instead of sleeping before it looks at what the cache kept.
   */
  async idle(): Promise<void> {
    while (this.rendering.size > 0 || this.removing.size > 0) await Promise.allSettled([...this.rendering, ...this.removing]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopCopies.abort();
    // Renders in progress finish (their followers are downloads in progress); copies stop.
    await Promise.allSettled([...this.rendering, this.copying]);
    await rm(this.dir, { recursive: true, force: true });
  }

  /** The entry of `key`: the cached or rendering one, or a new render. */
  private acquire(key: CacheKey, source: RenderSource): Entry {
    const existing = this.entries.get(key.id);
    if (existing) {
      this.touch(existing);
      return existing;
    }
    // A name per entry, not per key: an entry dropped and rendered again never shares a file
    // with its predecessor, whose removal may still be under way.
    const name = join(this.dir, `${key.id.slice(0, 32)}-${++this.serial}`);
    const entry = new Entry(key, source.contentType, name, `${name}.tmp`);
    entry.superseded = key.version < (this.latest.get(key.storeId) ?? 0);
    this.entries.set(key.id, entry);
    let ofStore = this.byStore.get(key.storeId);
    if (!ofStore) this.byStore.set(key.storeId, (ofStore = new Set()));
    ofStore.add(entry);
    this.renders++;
    const done = this.runRender(entry, source);
    this.rendering.add(done);
    // `done` rejects for warm(); the followers learn of a failure from the entry.
    done.then(() => this.rendering.delete(done), () => this.rendering.delete(done));
    entry.done = done;
    return entry;
  }

  private async runRender(entry: Entry, source: RenderSource): Promise<void> {
    const started = performance.now();
    let handle: FileHandle | null = null;
    try {
      handle = await open(entry.temp, 'wx', PRIVATE_FILE_MODE);
      entry.created = true;
      entry.wake();
      // Small chunks (a zip deflates in ~10 KB pieces) are gathered into writes of WRITE_BYTES:
      // each write costs a thread-pool round trip and wakes every follower. The first chunk goes
      // out alone, so the first byte is not held back.
      let pending: Uint8Array[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        const data = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        for (let offset = 0; offset < data.byteLength; ) {
          offset += (await handle!.write(data, offset, data.byteLength - offset)).bytesWritten;
        }
        // Writers yield fresh buffers (never reused), so followers may share this one.
        entry.noteWrite(data);
        this.grow(entry, data.byteLength);
        entry.wake();
      };
      for await (const chunk of source.body()) {
        pending.push(chunk);
        pendingBytes += chunk.byteLength;
        if (pendingBytes >= WRITE_BYTES || entry.written === 0) await flush();
      }
      if (pendingBytes > 0) await flush();
      await handle.close();
      handle = null;
      await rename(entry.temp, entry.file);
      entry.forgetRecent();
      entry.state = 'ready';
      entry.wake();
      this.diskFailureLogged = false;
      this.log?.info(
        { store: entry.key.storeId, version: entry.key.version, variant: entry.key.id.slice(0, entry.key.id.indexOf('-') + 17), bytes: entry.written, ms: Math.round(performance.now() - started) },
        'export rendered',
      );
      // Followers hold the file open, so dropping it now does not cut their downloads.
      if (entry.superseded || entry.dropped || this.closed || entry.bytes > this.maxBytes) this.drop(entry);
      else for (const coding of entry.wanted) this.queueCopy(entry, coding);
    } catch (error) {
      entry.state = 'failed';
      entry.error = error as Error;
      entry.forgetRecent();
      entry.wake();
      await handle?.close().catch(() => undefined);
      this.drop(entry);
      if (isDiskFailure(error)) this.noteDiskFailure(error as NodeJS.ErrnoException);
      else this.log?.warn({ store: entry.key.storeId, version: entry.key.version, err: { type: (error as Error).name } }, 'export render failed');
      throw error;
    }
  }

  /**
   * The disk is full (or failing): the followers of the failed render make it again without the
   * cache (FollowStream), new renders skip the disk for DISK_FAILURE_BYPASS_MS, and the failure
   * is logged once, not per request, until a render is kept again.
   */
  private noteDiskFailure(error: NodeJS.ErrnoException): void {
    this.bypassUntil = this.now() + DISK_FAILURE_BYPASS_MS;
    if (this.diskFailureLogged) return;
    this.diskFailureLogged = true;
    this.log?.warn({ dir: this.dir, err: { code: error.code } }, 'render cache disk full or failing: exports are streamed without the cache');
  }

  private touch(entry: Entry): void {
    this.entries.delete(entry.key.id);
    this.entries.set(entry.key.id, entry);
  }

  private grow(entry: Entry, bytes: number): void {
    entry.bytes += bytes;
    this.bytes += bytes;
    this.evict();
  }

  private evict(): void {
    if (this.bytes <= this.maxBytes) return;
    for (const entry of this.entries.values()) {
      if (this.bytes <= this.maxBytes) return;
      if (entry.state === 'ready') {
        this.evictions++;
        this.drop(entry);
      }
    }
  }

  /** Removes the entry and its files; open readers keep reading (POSIX unlink semantics). */
  private drop(entry: Entry): void {
    if (entry.dropped) return;
    entry.dropped = true;
    if (this.entries.get(entry.key.id) === entry) this.entries.delete(entry.key.id);
    const ofStore = this.byStore.get(entry.key.storeId);
    if (ofStore?.delete(entry) && ofStore.size === 0) this.byStore.delete(entry.key.storeId);
    this.bytes -= entry.bytes;
    entry.bytes = 0;
    for (const buffer of entry.memory.values()) this.memoryBytes -= buffer.length;
    entry.memory.clear();
    const files = [entry.temp, entry.file, ...[...entry.copies.keys()].map((coding) => entry.path(coding))];
    entry.copies.clear();
    const removal = Promise.allSettled(files.map((file) => rm(file, { force: true })));
    this.removing.add(removal);
    void removal.then(() => this.removing.delete(removal));
  }

  private async loadIntoMemory(entry: Entry, coding: Coding): Promise<void> {
    if (entry.loading.has(coding) || entry.memory.has(coding)) return;
    entry.loading.add(coding);
    try {
      const buffer = await readFile(entry.path(coding));
      if (entry.dropped || this.closed || entry.memory.has(coding)) return;
      entry.memory.set(coding, buffer);
      this.memoryBytes += buffer.length;
      // Least recently used first, as on disk; the entry just read is the most recent.
      for (const other of this.entries.values()) {
        if (this.memoryBytes <= this.memoryMax) break;
        for (const held of other.memory.values()) this.memoryBytes -= held.length;
        other.memory.clear();
      }
    } catch {
      // Evicted meanwhile: nothing to hold.
    } finally {
      entry.loading.delete(coding);
    }
  }

  private queueCopy(entry: Entry, coding: Copy): void {
    if (this.closed) return;
    this.copyQueue.push({ entry, coding });
    // One copy at a time: compression at these levels is CPU-heavy and only saves future bytes.
    this.copying ??= (async () => {
      for (let job = this.copyQueue.shift(); job; job = this.copyQueue.shift()) await this.makeCopy(job.entry, job.coding);
      this.copying = null;
    })();
  }

  private async makeCopy(entry: Entry, coding: Copy): Promise<void> {
    if (entry.dropped || this.closed) return;
    const target = entry.path(coding);
    const temp = `${target}.tmp`;
    try {
      await pipeline(createReadStream(entry.file), createCompressor(coding), createWriteStream(temp, { flags: 'wx', mode: PRIVATE_FILE_MODE }), { signal: this.stopCopies.signal });
      const { size } = await stat(temp);
      await rename(temp, target);
      if (entry.dropped || this.closed) {
        await rm(target, { force: true });
        return;
      }
      entry.copies.set(coding, size);
      this.grow(entry, size);
    } catch (error) {
      await rm(temp, { force: true }).catch(() => undefined);
      // ENOENT: the entry was evicted before its copy started; AbortError: closing.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ABORT_ERR') this.log?.warn({ err: { type: (error as Error).name, code } }, 'precompressing an export failed');
    }
  }
}

/** Removes cache directories left by instances that died without closing (their pid is gone). */
function removeAbandoned(root: string): void {
  for (const name of readdirSync(root)) {
    const pid = Number(/^(\d+)-[0-9a-f]+$/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    void rm(join(root, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
