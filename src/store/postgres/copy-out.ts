import type pg from 'pg';
import { CopyBinaryParser } from './copy-binary.js';

/**
 * `COPY (SELECT <one text column> …) TO STDOUT (FORMAT binary)` as a pg query, read whole:
 * `records` resolves to the rows' bytes, framing stripped. pg parses the protocol itself and
 * hands each CopyData message here; pg-copy-streams' `to` would parse the same messages again
 * in JavaScript to offer a stream (its parse was ~1/4 of the process's CPU in a 100k-item
 * render), and a page is read whole anyway (record-pages.ts).
 *
 * pg's per-query `query_timeout` applies (it calls handleError, then the connection is
 * discarded by its user); `callback` is what pg wraps to clear that timer.
 */
export class CopyRecordsQuery implements pg.Submittable {
  readonly records: Promise<Buffer | null>;
  callback?: (error: Error | null) => void;
  private readonly parser = new CopyBinaryParser();
  private failure: Error | null = null;
  private settle!: (error: Error | null) => void;

  constructor(private readonly text: string) {
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
    // The simple query protocol: COPY takes no bound parameters anyway.
    (connection as unknown as { query(text: string): void }).query(this.text);
  }

  handleCopyData(message: { chunk: Buffer }): void {
    if (this.failure) return;
    try {
      this.parser.push(message.chunk);
    } catch (error) {
      // Reported when the statement ends (pg routes its remaining messages here until then).
      this.failure = error as Error;
    }
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
