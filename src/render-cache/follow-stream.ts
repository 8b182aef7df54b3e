import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';

/** Bytes read from the cache file at a time: the size of the chunks the writers yield. */
const CHUNK_BYTES = 64 * 1024;

/** What a follower sees of a cache entry: how far its file is written, and whether that is all. */
export interface FollowedFile {
  /** Bytes of the identity file written so far (the whole file once `state` is 'ready'). */
  readonly written: number;
  readonly state: 'rendering' | 'ready' | 'failed';
  readonly error: Error | null;
  /**
   * The bytes of a recent write that starts at `offset`, still in memory (null: none does): a
   * reader keeping pace, or a few writes behind, takes them from here instead of the file.
   */
  recentAt(offset: number): Uint8Array | null;
  /** Resolves at the next write, or when the render ends. */
  progress(): Promise<void>;
  /** Opens the file for reading (the temp name while rendering, the final one after). */
  openForReading(): Promise<FileHandle>;
}

/**
 * Reads a cache file while it is being written, at the reader's own pace: a slow client never
 * slows the render (other requests follow the same file), and nothing is held in memory but
 * the chunk in hand — the bytes waiting for a slow reader are in the file, not in a buffer.
 * Only bytes whose write has completed are read, so a reader never sees a torn chunk.
 */
export class FollowStream extends Readable {
  private handle: FileHandle | null = null;
  private position = 0;
  private pumping = false;
  /** The render made again without the cache, after the cache's disk failed (see pump). */
  private uncached: AsyncIterator<Uint8Array> | null = null;
  /** Bytes of the uncached render still to skip: this reader had them from the file already. */
  private skip = 0;

  /**
   * `reopen` gives the entry again when its file vanished (evicted between lookup and open);
   * `uncached` renders the same bytes again without the cache, for when its disk is full.
   */
  constructor(
    private file: FollowedFile,
    private readonly reopen: () => FollowedFile,
    private readonly uncached_?: () => AsyncIterable<Uint8Array>,
  ) {
    super({ highWaterMark: CHUNK_BYTES });
  }

  override _read(): void {
    if (!this.pumping) void this.pump();
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      if (this.uncached) return await this.pumpUncached();
      if (!this.handle) {
        const handle = await this.openHandle();
        if (this.destroyed) return void (await handle.close());
        this.handle = handle;
      }
      for (;;) {
        if (this.destroyed || !this.handle) return;
        const available = this.file.written - this.position;
        const recent = available > 0 ? this.file.recentAt(this.position) : null;
        if (recent) {
          this.position += recent.byteLength;
          if (!this.push(recent)) return;
          continue;
        }
        if (available > 0) {
          const buffer = Buffer.allocUnsafe(Math.min(available, CHUNK_BYTES));
          const { bytesRead } = await this.handle.read(buffer, 0, buffer.length, this.position);
          if (bytesRead === 0) throw new Error('the cache file is shorter than its written length');
          this.position += bytesRead;
          if (!this.push(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead))) return;
          continue;
        }
        if (this.file.state === 'ready') {
          this.push(null);
          return;
        }
        if (this.file.state === 'failed') throw this.file.error ?? new Error('the render failed');
        await this.file.progress();
      }
    } catch (error) {
      // The cache's disk is full (or failing): the same bytes are made again without it (a
      // render is deterministic, one ETag names one byte sequence), skipping what this reader
      // already had, so the download completes instead of being cut at the disk's size.
      if (isDiskFailure(error) && this.uncached_ && !this.uncached && !this.destroyed) {
        this.skip = this.position;
        this.uncached = this.uncached_()[Symbol.asyncIterator]();
        await this.handle?.close().catch(() => undefined);
        this.handle = null;
        this.pumping = false;
        return await this.pump();
      }
      this.destroy(error as Error);
    } finally {
      this.pumping = false;
    }
  }

  private async pumpUncached(): Promise<void> {
    for (;;) {
      if (this.destroyed) return;
      const step = await this.uncached!.next();
      if (step.done) return void this.push(null);
      let chunk = step.value;
      if (this.skip > 0) {
        const dropped = Math.min(this.skip, chunk.byteLength);
        this.skip -= dropped;
        chunk = chunk.subarray(dropped);
        if (chunk.byteLength === 0) continue;
      }
      if (!this.push(chunk)) return;
    }
  }

  private async openHandle(): Promise<FileHandle> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.file.openForReading();
      } catch (error) {
        // Evicted (or superseded) between the lookup and the open: take the entry anew, which
        // renders it again if need be. Nothing has been read yet, so the bytes stay whole.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 2 || this.position > 0) throw error;
        this.file = this.reopen();
      }
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // An uncached render in progress lets go of its database reader.
    void this.uncached?.return?.().catch(() => undefined);
    const handle = this.handle;
    this.handle = null;
    // FileHandle.close waits for a read in progress on it.
    if (handle) handle.close().then(() => callback(error), () => callback(error));
    else callback(error);
  }
}

/** Errors of the cache's disk (full, over quota, read-only, failing), not of the render. */
export function isDiskFailure(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'EROFS' || code === 'EIO';
}
