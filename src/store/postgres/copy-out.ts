import type { EventEmitter } from 'node:events';
import type pg from 'pg';
import { CopyBinaryParser } from './copy-binary.js';
import { CopyFrames, type CopyDataSink } from './copy-frames.js';
import { readsInPlace } from './one-buffer-socket.js';

type DataListener = (chunk: Buffer) => void;

/**
 * What reads the COPY's bytes: its records (copy-binary.ts) or the COPY whole (copy-bytes.ts).
 * One that copies what it keeps may be handed a socket's reads in place (one-buffer-socket.ts).
 */
export type CopyParser = Pick<CopyBinaryParser, 'push' | 'betweenRows' | 'record' | 'take' | 'end'> &
  Pick<CopyDataSink, 'runEnd' | 'message'> & { readonly copiesWhatItKeeps?: boolean };

/**
 * `COPY (SELECT <one text column> …) TO STDOUT (FORMAT binary)` as a pg query, read whole (a
 * page is, record-pages.ts): `records` resolves to the rows' bytes, framing stripped; or, with a
 * CopyBytes parser, any COPY's CopyData messages, framing and all (for native-copy-records.ts). While the
 * COPY's rows come, their messages are read off the socket by copy-frames.ts (which says why),
 * not by pg; pg gets the socket back for the messages that end the query. On a oneBufferSocket
 * with a parser that copies what it keeps, the reads are taken in place (one-buffer-socket.ts). Where the connection
 * is not laid out as pg 8 lays it out (one 'data' listener), pg parses every message and hands
 * each CopyData message to handleCopyData.
 *
 * pg's per-query `query_timeout` applies (it calls handleError, then the connection is
 * discarded by its user); `callback` is what pg wraps to clear that timer.
 */
export class CopyRecordsQuery implements pg.Submittable {
  /** The records, in blocks of whole records (none for no rows). */
  readonly records: Promise<Buffer[]>;
  callback?: (error: Error | null) => void;
  private failure: Error | null = null;
  private settle!: (error: Error | null) => void;

  /** `parser` CopyBytes: `records` resolves to the COPY's CopyData messages instead, in pieces. */
  constructor(
    private readonly text: string,
    private readonly parser: CopyParser = new CopyBinaryParser(),
  ) {
    this.records = new Promise((resolve, reject) => {
      this.settle = (error) => {
        this.callback?.(error);
        this.callback = undefined;
        if (error) reject(error);
        else resolve(this.parser.take());
      };
    });
  }

  submit(connection: pg.Connection): void {
    const stream = (connection as unknown as { stream: EventEmitter }).stream;
    const listeners = stream.listeners('data');
    if (listeners.length === 1) this.readFrames(stream, listeners[0] as DataListener);
    // The simple query protocol: COPY takes no bound parameters anyway.
    (connection as unknown as { query(text: string): void }).query(this.text);
  }

  /** Reads the socket's messages until the COPY's end, then gives them back to pg's parser. */
  private readFrames(stream: EventEmitter, pgListener: DataListener): void {
    const frames = new CopyFrames({
      push: (chunk, start, end) => this.copyData(chunk, start, end),
      // After a failure the rows are read to the end of the COPY and dropped (push ignores them).
      betweenRows: () => this.failure === null && this.parser.betweenRows(),
      record: (chunk, start, end) => this.parser.record(chunk, start, end),
      runEnd: this.parser.runEnd,
      message: (length) => this.parser.message?.(length),
    });
    if (this.parser.copiesWhatItKeeps && readsInPlace(stream)) {
      // The reads in place, with no Buffer made per read; pg's listener hears nothing meanwhile.
      stream.readInPlace((bytes) => {
        const rest = frames.read(bytes);
        if (rest === null) return;
        stream.readInPlace(null);
        // A view of the socket's buffer, which the next read overwrites: pg gets its own copy.
        pgListener(Buffer.from(rest));
      });
      return;
    }
    const listener: DataListener = (chunk) => {
      const rest = frames.read(chunk);
      if (rest === null) return;
      stream.removeListener('data', listener);
      stream.on('data', pgListener);
      pgListener(rest);
    };
    // Swapped in one turn: the connection is idle (pg's parser holds no partial message) and
    // nothing comes before the query is sent.
    stream.removeListener('data', pgListener);
    stream.on('data', listener);
  }

  private copyData(chunk: Uint8Array, start: number, end: number): void {
    if (this.failure) return;
    try {
      this.parser.push(chunk, start, end);
    } catch (error) {
      // Reported when the statement ends.
      this.failure = error as Error;
    }
  }

  handleCopyData(message: { chunk: Buffer }): void {
    if (this.parser.runEnd) {
      // Framed again; pg's parser may reuse the bytes of its chunk, so a sink that keeps them and does not copy them gets a copy.
      this.parser.message?.(message.chunk.length);
      this.copyData(this.parser.copiesWhatItKeeps ? message.chunk : Buffer.from(message.chunk), 0, message.chunk.length);
      return;
    }
    this.copyData(message.chunk, 0, message.chunk.length);
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    if (!this.failure) {
      try {
        this.parser.end();
      } catch (error) {
        this.failure = error as Error;
      }
    }
    this.settle(this.failure);
  }

  handleError(error: Error): void {
    this.settle(error);
  }

  // Anything but a COPY TO answers with these; none is expected.
  handleRowDescription(): void {
    this.failure ??= new Error('COPY TO expected: the statement returned rows');
  }

  handleDataRow(): void {}

  handleEmptyQuery(): void {
    this.failure ??= new Error('COPY TO expected: the statement was empty');
  }

  handleCopyInResponse(): void {
    // The server then waits for data this query never sends; the connection must go.
    this.settle(new Error('COPY TO expected: the server asked for COPY FROM data'));
  }
}
