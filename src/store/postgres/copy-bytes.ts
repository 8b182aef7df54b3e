import { COPY_DATA } from './copy-frames.js';

/** A page's first buffer; doubled as its COPY needs (a 20,000-row page's COPY is 2–3 MiB). */
const FIRST_BYTES = 1024 * 1024;
/** Buffers kept for later pages: the pages read at once and the ones being built (record-pages.ts). */
const KEPT_BUFFERS = 4;
/** A buffer larger than this (an unusual page) is left to the collector. */
const KEPT_BYTES_MAX = 16 * 1024 * 1024;
const kept: Buffer[] = [];

/**
 * A binary COPY's CopyData messages kept whole, framing and all, for native-copy-records.ts,
 * whose C reads the rows where they lie in this buffer, skipping each message's header, and
 * checks the signature and the trailer itself.
 *
 * The messages are copied as they come into one buffer, which a page before this one used:
 * nothing is kept of the chunks given, so they may be a socket's one buffer read into again
 * (one-buffer-socket.ts), and no Buffer is made per read or per row. A copy per row cost the
 * instance 13–15 ms of a 100k-item first XML render ("2026-11-27, day"); a Buffer per read, a
 * third of what V8 counted towards its full collections ("2026-11-27, late night";
 * bench/RESULTS.md both). `release` gives the buffer back once the page is built. Kept buffers
 * are memory the process has touched before: a fresh one a page cost a page fault every 4 KiB
 * ("2026-11-27, after 18:00").
 */
export class CopyBytes {
  /** It copies what it keeps: copy-out.ts may hand it a read in place. */
  readonly copiesWhatItKeeps = true;
  private buffer: Buffer | null = kept.pop() ?? null;
  private length = 0;

  /** `runEnd`: the module's copyDataRun (copy-frames.ts CopyDataSink.runEnd). */
  constructor(readonly runEnd: (chunk: Buffer, offset: number) => number) {}

  /** A piece of a message's body, read in pieces (after `message`). */
  push(chunk: Uint8Array, start = 0, end = chunk.length): void {
    if (end <= start) return;
    const into = this.room(end - start);
    into.set(chunk.subarray(start, end), this.length);
    this.length += end - start;
  }

  /** A run of whole CopyData messages, framing and all. */
  record(chunk: Uint8Array, start: number, end: number): void {
    this.push(chunk, start, end);
  }

  /** A message read in pieces begins: its header, made again, so the bytes stay a stream of whole messages. */
  message(length: number): void {
    const into = this.room(5);
    into[this.length] = COPY_DATA;
    into.writeInt32BE(length + 4, this.length + 1);
    this.length += 5;
  }

  /** Always: a piece need not end a row. */
  betweenRows(): boolean {
    return true;
  }

  /** The messages so far, in one piece (none when none), for the build to read in place (it may overwrite them); valid until `release`. */
  take(): Buffer[] {
    return this.length === 0 || this.buffer === null ? [] : [this.buffer.subarray(0, this.length)];
  }

  /** The C reads the trailer: nothing to check here. */
  end(): void {}

  /** Gives the buffer back for a later page: what `take` gave must not be read after this. */
  release(): void {
    const buffer = this.buffer;
    this.buffer = null;
    this.length = 0;
    if (buffer && buffer.length <= KEPT_BYTES_MAX && kept.length < KEPT_BUFFERS) kept.push(buffer);
  }

  /** The buffer, grown to take `bytes` more. */
  private room(bytes: number): Buffer {
    const needed = this.length + bytes;
    if (this.buffer === null || needed > this.buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(needed, (this.buffer?.length ?? FIRST_BYTES / 2) * 2));
      this.buffer?.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    return this.buffer;
  }
}
