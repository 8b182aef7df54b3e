/*
 * The protocol messages of a COPY TO, read straight off the connection's socket: the CopyData
 * messages' bodies go to a sink with no object or Buffer made per message, whole rows in one
 * loop; the first message that ends the COPY (CopyDone, an ErrorResponse, anything unexpected)
 * and all after it are handed back to pg's own parser, which then finishes the query as usual
 * (CommandComplete, ReadyForQuery).
 *
 * Why by hand: pg parses each row's message into an object and passes it through two events,
 * and pg-copy-streams' `to`, which takes the socket the same way, gathers each message into a
 * list of Buffers to offer a stream (~1/4 of the instance's CPU in a 100k-item render, when it
 * was tried). With pg's parsing the instance used 120–150 ms of CPU for a first 100k-item JSON
 * render, with this 80–110 ms, and the render went from 0.84× to 1.05× `psql \copy` (XML 0.79×
 * → 0.92×; bench/figures/first-json-xml.ts, bench/RESULTS.md "2026-11-27, night").
 *
 * Message layout (PostgreSQL docs, "Message Formats"): a byte of type, then an int32 length
 * that counts itself but not the type byte, then the body.
 */

export const COPY_DATA = 0x64; // d
const COPY_OUT_RESPONSE = 0x48; // H
const COMMAND_COMPLETE = 0x43; // C
// Asynchronous messages the server may put between CopyData messages (docs, "COPY Operations"):
// skipped, as pg-copy-streams skips them (a notice during a page's COPY is not logged).
const ASYNCHRONOUS = new Set([0x4e /* N */, 0x53 /* S */, 0x41 /* A */]);
const HEADER_BYTES = 5;
/** A row's CopyData message before its record: the message header, the int16 field count, the int32 length. */
const ROW_FRAMING = HEADER_BYTES + 2 + 4;

/** Where the CopyData messages' bodies go (copy-binary.ts). */
export interface CopyDataSink {
  /** A piece of a CopyData message's body. */
  push(chunk: Uint8Array, start: number, end: number): void;
  /** Whether the sink is between two rows, so whole rows' records may be given to `record`. */
  betweenRows(): boolean;
  /** One row's record: its bytes from `start` to `end`. */
  record(chunk: Uint8Array, start: number, end: number): void;
  /**
   * A sink that keeps the CopyData messages whole, framing and all (copy-bytes.ts), instead of
   * one-field rows' values, says where the run of whole CopyData messages from `offset` in
   * `chunk` ends (the C module finds it); `record` then takes each such run as it is, and a
   * message read in pieces comes as `message` (its body's length), then its body by `push`.
   */
  runEnd?(chunk: Buffer, offset: number): number;
  /** A CopyData message of `length` body bytes begins; its body comes by `push` (sinks with runEnd). */
  message?(length: number): void;
}

export class CopyFrames {
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerHave = 0;
  /** Bytes of the current message's body still to come. */
  private bodyLeft = 0;
  private inCopyData = false;
  /** Whether CopyOutResponse came: before it, CommandComplete is an earlier statement's (the page's SET LOCAL). */
  private copying = false;

  /** The ending message's header when it began in an earlier chunk than its end: pg reads it first. */
  private pending: Buffer | null = null;

  /** `sink` gets every CopyData message's body, in order: in pieces, or as a whole row's record. */
  constructor(private readonly sink: CopyDataSink) {}

  /**
   * Reads a chunk. Returns null while the COPY goes on, else the bytes pg must read next: the
   * ending message from its first byte on.
   */
  read(chunk: Buffer): Buffer | null {
    this.pending = null;
    const stop = this.frames(chunk);
    if (stop < 0) return null;
    return this.pending ? Buffer.concat([this.pending, chunk.subarray(stop)]) : chunk.subarray(stop);
  }

  /** -1 when all of the chunk was read, else the offset of the first byte pg must read (after `pending`). */
  private frames(chunk: Buffer): number {
    const end = chunk.length;
    let offset = 0;
    while (offset < end) {
      if (this.bodyLeft === 0 && this.headerHave === 0 && this.copying && this.sink.betweenRows()) {
        offset = this.wholeRows(chunk, offset, end);
        if (offset === end) break;
      }
      if (this.bodyLeft > 0) {
        const used = Math.min(this.bodyLeft, end - offset);
        if (this.inCopyData) this.sink.push(chunk, offset, offset + used);
        offset += used;
        this.bodyLeft -= used;
        continue;
      }
      let code: number;
      let length: number;
      const start = offset;
      if (this.headerHave === 0 && end - offset >= HEADER_BYTES) {
        // The common case: the header whole in this chunk, read in place.
        code = chunk[offset];
        length = ((chunk[offset + 1] << 24) | (chunk[offset + 2] << 16) | (chunk[offset + 3] << 8) | chunk[offset + 4]) - 4;
        offset += HEADER_BYTES;
      } else {
        // A header the chunk cuts is gathered; completed, it began in an earlier chunk (hence `pending`).
        const used = Math.min(HEADER_BYTES - this.headerHave, end - offset);
        chunk.copy(this.header, this.headerHave, offset, offset + used);
        this.headerHave += used;
        offset += used;
        if (this.headerHave < HEADER_BYTES) break;
        code = this.header[0];
        length = this.header.readInt32BE(1) - 4;
        this.headerHave = 0;
        if (!this.continues(code)) {
          this.pending = Buffer.from(this.header);
          return offset;
        }
        this.enter(code, length);
        continue;
      }
      if (!this.continues(code)) return start;
      this.enter(code, length);
    }
    return -1;
  }

  /**
   * The common case in one loop: each CopyData message whole in the chunk and holding one row of
   * one non-NULL field, its record handed on with no state kept between rows. Stops (the offset
   * of the first message it did not read) at anything else: the binary header, a NULL, the
   * trailer, another message, a message the chunk cuts.
   */
  private wholeRows(chunk: Buffer, offset: number, end: number): number {
    // A plain view of the chunk, made once: its records' subarrays are then V8's own (record's comment says why).
    const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.sink.runEnd) {
      const run = this.sink.runEnd(chunk, offset);
      if (run > offset) this.sink.record(bytes, offset, run);
      return run;
    }
    while (end - offset >= ROW_FRAMING && chunk[offset] === COPY_DATA) {
      const body = ((chunk[offset + 1] << 24) | (chunk[offset + 2] << 16) | (chunk[offset + 3] << 8) | chunk[offset + 4]) - 4;
      const fields = (chunk[offset + 5] << 8) | chunk[offset + 6];
      const size = (chunk[offset + 7] << 24) | (chunk[offset + 8] << 16) | (chunk[offset + 9] << 8) | chunk[offset + 10];
      if (fields !== 1 || body < 6 || size !== body - 6 || offset + HEADER_BYTES + body > end) break;
      const start = offset + ROW_FRAMING;
      this.sink.record(bytes, start, start + size);
      offset = start + size;
    }
    return offset;
  }

  /** Whether a message of this type belongs to the COPY (else it ends it, and pg reads it). */
  private continues(code: number): boolean {
    if (code === COPY_DATA) return this.copying;
    if (code === COPY_OUT_RESPONSE) return !this.copying;
    if (code === COMMAND_COMPLETE) return !this.copying;
    return ASYNCHRONOUS.has(code);
  }

  private enter(code: number, length: number): void {
    if (code === COPY_OUT_RESPONSE) this.copying = true;
    this.inCopyData = code === COPY_DATA;
    this.bodyLeft = length;
    if (this.inCopyData) this.sink.message?.(length);
  }
}
