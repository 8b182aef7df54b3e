import type { ColumnKind } from '../sql/dialect.js';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER } from '../item-rows/copy-rows.js';

/*
 * Rows of plain values as `COPY … FROM STDIN (FORMAT binary)` takes them (PostgreSQL's docs,
 * "COPY", Binary Format; each type's binary form is its `*send` function's): per row an int16
 * field count, per field an int32 length (-1: NULL) and its bytes, big-endian. The delivery
 * ledger's busy batches go in so (postgres/dialect.ts copyRows): against the same rows as
 * unnested arrays, PostgreSQL spent ~0.6× the CPU a row and this process ~0.3× (no array texts
 * to build, escape and parse; no timestamp to print and read): bench/RESULTS.md, "2026-12-07, night".
 */

/** PostgreSQL's epoch, 2000-01-01, in milliseconds since the Unix one: a timestamptz is microseconds since it. */
const POSTGRES_EPOCH_MS = Date.UTC(2000, 0, 1);
const TWO_TO_32 = 2 ** 32;
/** A UTF-16 code unit is at most 3 bytes of UTF-8. */
const MOST_UTF8_BYTES_PER_UNIT = 3;

/** A field other than a text takes at most its length and 8 bytes. */
const FIXED_FIELD_BYTES = 12;
/** What a batch's buffer first holds a row: a ledger row of short texts fits (it doubles when not). */
const FIRST_BYTES_PER_FIELD = 16;

/**
 * `values` in row order (as SqlDialect.rowsParams takes them) as COPY's binary rows, header and
 * trailer included. A text is any string; an integer or bigint a safe integer; a boolean true,
 * false, 1 or 0; a time a Date; null or undefined is NULL.
 */
export function binaryCopyRows(kinds: readonly ColumnKind[], values: readonly unknown[]): Buffer {
  const writer = new RowsWriter(BINARY_COPY_HEADER.length + values.length * FIRST_BYTES_PER_FIELD + BINARY_COPY_TRAILER.length);
  writer.bytes(BINARY_COPY_HEADER);
  for (let start = 0; start < values.length; start += kinds.length) {
    writer.room(2);
    writer.int16(kinds.length);
    for (let column = 0; column < kinds.length; column++) writer.field(kinds[column], values[start + column]);
  }
  writer.bytes(BINARY_COPY_TRAILER);
  return writer.done();
}

class RowsWriter {
  private buffer: Buffer;
  private at = 0;

  constructor(bytes: number) {
    this.buffer = Buffer.allocUnsafe(bytes);
  }

  field(kind: ColumnKind, value: unknown): void {
    this.room(FIXED_FIELD_BYTES);
    if (value === null || value === undefined) return this.int32(-1);
    switch (kind) {
      case 'text': return this.text(String(value));
      case 'integer':
        this.int32(4);
        return this.int32(safeInteger(value));
      case 'bigint':
        this.int32(8);
        return this.int64(safeInteger(value));
      case 'boolean':
        this.int32(1);
        this.buffer[this.at++] = value === true || value === 1 ? 1 : 0;
        return;
      case 'time':
        this.int32(8);
        return this.int64(((value as Date).getTime() - POSTGRES_EPOCH_MS) * 1000);
    }
  }

  /** Makes room for `bytes` more, doubling. */
  room(bytes: number): void {
    if (this.buffer.length - this.at >= bytes) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }

  bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.at);
    this.at += bytes.length;
  }

  int16(n: number): void {
    this.at = this.buffer.writeInt16BE(n, this.at);
  }

  private int32(n: number): void {
    this.at = this.buffer.writeInt32BE(n, this.at);
  }

  /** A safe integer as an int64: its high and low 32 bits (no BigInt made a value). */
  private int64(n: number): void {
    const high = Math.floor(n / TWO_TO_32);
    this.at = this.buffer.writeInt32BE(high, this.at);
    this.at = this.buffer.writeUInt32BE(n - high * TWO_TO_32, this.at);
  }

  private text(text: string): void {
    this.room(4 + text.length * MOST_UTF8_BYTES_PER_UNIT);
    const length = this.buffer.write(text, this.at + 4, 'utf8');
    this.buffer.writeInt32BE(length, this.at);
    this.at += 4 + length;
  }

  done(): Buffer {
    return this.buffer.subarray(0, this.at);
  }
}

function safeInteger(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new Error(`not an integer: ${String(value)}`);
  return value;
}
