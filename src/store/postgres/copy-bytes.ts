import { COPY_DATA } from './copy-frames.js';

/**
 * A binary COPY's CopyData messages kept whole, framing and all, for native-copy-records.ts,
 * whose C strips the framing while it copies the bodies into one buffer, then reads the rows
 * and checks the signature and the trailer itself. Nothing is copied here: the pieces are views
 * of the socket's chunks (each chunk a buffer of its own, never reused), a run of whole messages
 * per chunk, so the event loop does a few operations per chunk instead of a copy per row (a
 * copy per row cost the instance 13–15 ms of a 100k-item first XML render; bench/RESULTS.md,
 * "2026-11-27, day").
 */
export class CopyBytes {
  private pieces: Buffer[] = [];

  /** `runEnd`: the module's copyDataRun (copy-frames.ts CopyDataSink.runEnd). */
  constructor(readonly runEnd: (chunk: Buffer, offset: number) => number) {}

  /** A piece of a message's body, read in pieces (after `message`). */
  push(chunk: Uint8Array, start = 0, end = chunk.length): void {
    if (end > start) this.pieces.push(Buffer.from(chunk.buffer, chunk.byteOffset + start, end - start));
  }

  /** A run of whole CopyData messages, framing and all. */
  record(chunk: Uint8Array, start: number, end: number): void {
    this.push(chunk, start, end);
  }

  /** A message read in pieces begins: its header, made again, so the pieces stay a stream of whole messages. */
  message(length: number): void {
    const header = Buffer.allocUnsafe(5);
    header[0] = COPY_DATA;
    header.writeInt32BE(length + 4, 1);
    this.pieces.push(header);
  }

  /** Always: a piece need not end a row. */
  betweenRows(): boolean {
    return true;
  }

  /** The messages so far, in pieces (none when none). */
  take(): Buffer[] {
    const pieces = this.pieces;
    this.pieces = [];
    return pieces;
  }

  /** The C reads the trailer: nothing to check here. */
  end(): void {}
}
