/*
 * The records of `COPY (SELECT <one text column> …) TO STDOUT (FORMAT binary)`, without COPY's
 * framing. Binary rather than text COPY: a value goes out as its bytes, with nothing escaped
 * that would have to be unescaped here (text COPY doubles every backslash and writes a newline
 * as `\n`). Layout (PostgreSQL docs, "COPY", Binary Format): an 11-byte signature, an int32 of
 * flags, an int32 length of a header extension and the extension; then per row an int16 field
 * count, and per field an int32 length (-1: NULL) and that many bytes; a field count of -1 ends
 * the data. Integers are big-endian.
 */
import { BINARY_COPY_SIGNATURE } from '../item-rows/copy-rows.js';

/** Signature, flags, extension length. */
const HEADER_BYTES = BINARY_COPY_SIGNATURE.length + 4 + 4;
/** Bits 16–31 are critical flags (bit 16: OIDs included, servers before 12 only): rows laid out otherwise. */
const CRITICAL_FLAGS = 0xffff0000;

/** Where the parser is: each state's bytes may be split across chunks. */
const enum At {
  Header,
  Extension,
  /** A row's int16 field count. */
  Row,
  /** The record's int32 length. */
  Length,
  Value,
  End,
}

/**
 * Records are gathered in blocks, each twice the last from FIRST_BLOCK_BYTES up to
 * MAX_BLOCK_BYTES (a record longer than its block gets one of its own), so a small page holds
 * little spare room and no block is copied again as the records grow. One doubling buffer
 * copied a ~3 MiB page about twice over: 9–19 ms of the 133–156 ms a 100k-item render kept the
 * instance busy in three profiles (bench/RESULTS.md, "2026-11-27, night").
 */
const FIRST_BLOCK_BYTES = 64 * 1024;
const MAX_BLOCK_BYTES = 1024 * 1024;

/** A push parser: the chunks of a binary COPY in, in order; its records' bytes gathered, taken out when wanted. */
export class CopyBinaryParser {
  private at = At.Header;
  /** Bytes of the extension or the value still to come. */
  private left = 0;
  /** A fixed-size piece (header, field count, length) split across chunks, gathered here. */
  private readonly split = Buffer.alloc(HEADER_BYTES);
  private splitHave = 0;
  /**
   * The records' bytes so far, copied out of the chunks (the consumer may keep them: the render
   * cache shares its writes): the blocks filled, and the one being filled. A record is never
   * split across blocks (a store's chunks hold whole records).
   */
  private blocks: Buffer[] = [];
  private out: Buffer = Buffer.allocUnsafe(0);
  private written = 0;
  /** Where in `out` the record being read (At.Value) began. */
  private recordStart = 0;
  private nextBlockBytes = FIRST_BLOCK_BYTES;

  /** Reads `chunk` from `start` to `end` (any piece of the COPY: a record may be split across chunks). */
  push(chunk: Uint8Array, start = 0, end = chunk.length): void {
    let offset = start;
    while (offset < end) {
      switch (this.at) {
        case At.Row: {
          let fields: number;
          // The common case, read in place; a count split across chunks is gathered first.
          if (this.splitHave === 0 && end - offset >= 2) {
            fields = ((chunk[offset] << 24) | (chunk[offset + 1] << 16)) >> 16;
            offset += 2;
          } else {
            offset = this.gather(chunk, offset, end, 2);
            if (this.splitHave < 2) break;
            fields = this.split.readInt16BE(0);
            this.splitHave = 0;
          }
          if (fields === 1) this.at = At.Length;
          else if (fields === -1) this.at = At.End;
          else throw new Error(`COPY binary: a row of ${fields} fields, not one record`);
          break;
        }
        case At.Length: {
          let size: number;
          if (this.splitHave === 0 && end - offset >= 4) {
            size = (chunk[offset] << 24) | (chunk[offset + 1] << 16) | (chunk[offset + 2] << 8) | chunk[offset + 3];
            offset += 4;
          } else {
            offset = this.gather(chunk, offset, end, 4);
            if (this.splitHave < 4) break;
            size = this.split.readInt32BE(0);
            this.splitHave = 0;
          }
          // A NULL record (-1) has no bytes, as string_agg skipped it; an empty one neither.
          if (size > 0) {
            this.at = At.Value;
            this.left = size;
            this.room(size);
            this.recordStart = this.written;
          } else {
            this.at = At.Row;
          }
          break;
        }
        case At.Value: {
          const used = Math.min(this.left, end - offset);
          this.out.set(chunk.subarray(offset, offset + used), this.written);
          this.written += used;
          offset += used;
          this.left -= used;
          if (this.left === 0) this.at = At.Row;
          break;
        }
        case At.Header: {
          offset = this.gather(chunk, offset, end, HEADER_BYTES);
          if (this.splitHave < HEADER_BYTES) break;
          this.splitHave = 0;
          this.left = readHeader(this.split);
          this.at = this.left === 0 ? At.Row : At.Extension;
          break;
        }
        case At.Extension: {
          const used = Math.min(this.left, end - offset);
          offset += used;
          this.left -= used;
          if (this.left === 0) this.at = At.Row;
          break;
        }
        case At.End:
          throw new Error('COPY binary: data after the trailer');
      }
    }
  }

  /** Whether the parser is between two rows (copy-frames.ts may then hand it whole records). */
  betweenRows(): boolean {
    return this.at === At.Row && this.splitHave === 0;
  }

  /**
   * One row's whole record, its bytes from `start` to `end` of `chunk`, read between two rows (its
   * framing read by the caller). `chunk` is best a plain Uint8Array: a Buffer's subarray runs
   * Buffer's own constructor, and Buffer#copy crosses into C++, each slower per record in a first
   * render's cold process (scratch loop, 100k records of 165 bytes, medians of four cold runs:
   * 20.5 ms of CPU against 27.3 and 37.0; bench/RESULTS.md, "2026-11-27, night").
   */
  record(chunk: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    this.out.set(chunk.subarray(start, end), this.written);
    this.written += end - start;
  }

  /** The whole records read since the last take, in blocks; none when none. */
  take(): Buffer[] {
    if (this.at === At.Value) {
      // A record is being read: its bytes so far move to a block of their own, with room for the rest.
      const partial = this.out.subarray(this.recordStart, this.written);
      this.written = this.recordStart;
      this.fill();
      const block = this.newBlock(partial.length + this.left);
      block.set(partial);
      this.out = block;
      this.written = partial.length;
      this.recordStart = 0;
    } else {
      this.fill();
      this.out = Buffer.allocUnsafe(0);
    }
    const blocks = this.blocks;
    this.blocks = [];
    return blocks;
  }

  /** Room for a record of `bytes` in the block being filled, else a new block. */
  private room(bytes: number): void {
    if (this.written + bytes <= this.out.length) return;
    this.fill();
    this.out = this.newBlock(bytes);
  }

  /** The next block, with room for at least `bytes`. */
  private newBlock(bytes: number): Buffer {
    const size = Math.max(this.nextBlockBytes, bytes);
    this.nextBlockBytes = Math.min(2 * this.nextBlockBytes, MAX_BLOCK_BYTES);
    return Buffer.allocUnsafe(size);
  }

  /** Ends the block being filled (its bytes so far). */
  private fill(): void {
    if (this.written > 0) this.blocks.push(this.out.subarray(0, this.written));
    this.written = 0;
  }

  /** Throws unless the trailer came: a COPY cut short must not pass for a whole one. */
  end(): void {
    if (this.at !== At.End) throw new Error('COPY binary: the data ended before its trailer');
  }

  /** Adds to `split` what it lacks of `size` bytes from `chunk` at `offset` (up to `end`); the offset after. */
  private gather(chunk: Uint8Array, offset: number, end: number, size: number): number {
    const used = Math.min(size - this.splitHave, end - offset);
    this.split.set(chunk.subarray(offset, offset + used), this.splitHave);
    this.splitHave += used;
    return offset + used;
  }
}

/** The header's extension length, once the signature and flags are checked. */
function readHeader(header: Buffer): number {
  if (!header.subarray(0, BINARY_COPY_SIGNATURE.length).equals(BINARY_COPY_SIGNATURE)) throw new Error('COPY binary: not a binary COPY signature');
  if ((header.readUInt32BE(BINARY_COPY_SIGNATURE.length) & CRITICAL_FLAGS) !== 0) throw new Error('COPY binary: unknown critical flags');
  return header.readUInt32BE(BINARY_COPY_SIGNATURE.length + 4);
}
