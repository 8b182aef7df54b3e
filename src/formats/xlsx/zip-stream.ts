/*
 * A streaming zip writer, hand-written rather than taken from a library: yazl computes CRC-32 in
 * JavaScript (~11 % of an XLSX export's CPU, bench/RESULTS.md 'Profile: first XLSX'); zlib.crc32
 * is native. Benchmark: bench/xlsx.ts (`node --import tsx bench/xlsx.ts prices`).
 *
 * Layout (APPNOTE.TXT 6.3): per entry a local file header with general-purpose bits 3 (sizes and
 * CRC follow the data, in a data descriptor) and 11 (UTF-8 name), the deflated data as zlib emits
 * it, a data descriptor with its 0x08074b50 signature; then the central directory and the
 * end-of-central-directory record. The bytes are the ones yazl 3 wrote for the same input
 * (Unix "version made by", mode 0664, the Info-ZIP "UT" mtime field in the central directory).
 *
 * ZIP64: implemented, as yazl did, rather than refused. An entry whose sizes or local-header offset
 * pass 0xFFFFFFFE gets a 24-byte (8-byte sizes) data descriptor and a ZIP64 extended-information
 * field in its central-directory record (version needed 45); an archive with 0xFFFF or more
 * entries, or whose central directory's size or offset passes 0xFFFFFFFE, gets the ZIP64
 * end-of-central-directory record and locator. A streamed entry's size is not known when its local
 * header goes out, so the local header never carries the ZIP64 field (as with yazl, Go's
 * archive/zip and Java's ZipOutputStream): readers that go by the central directory read such
 * archives (unzip and Python's zipfile are tested on them, zip-stream.test.ts); a reader that only
 * walks local headers could misread the 24-byte descriptor. Sizes stay exact integers in a double
 * up to 2^53.
 */
import zlib from 'node:zlib';
import {
  centralDirectory, dataDescriptor, entryName, localFileHeader, METHOD_DEFLATED, METHOD_STORED, timestamps, type WrittenEntry,
} from './zip-records.js';

/** One file of the archive; `content` is called only when the archive reaches it. */
export interface ZipEntrySource {
  path: string;
  content(): AsyncIterable<Uint8Array>;
}

export interface ZipStreamOptions {
  /** Modification time of every entry: the same input gives the same bytes. */
  mtime: Date;
  /** zlib deflate level, 1 (fast) … 9 (small); 0 stores the entries uncompressed. */
  compressionLevel: number;
}

/** Raw deflate of no bytes at every level 1–9: an empty final fixed-Huffman block. */
const EMPTY_DEFLATE = Buffer.from([0x03, 0x00]);

/** zlib's output buffer: one 256 KiB XML chunk at level 1 deflates into one or two of these. */
const DEFLATE_OUTPUT_CHUNK = 64 * 1024;
/**
 * Uncompressed bytes handed to deflate but not yet compressed, before the source is asked for more:
 * with 256 KiB source chunks, one is compressed on the thread pool while the next is built.
 */
const MAX_DEFLATE_BACKLOG = 256 * 1024;

/**
 * A deflated zip archive as an async iterable of chunks. Entries are written one after
 * another, each streamed from its source with backpressure (data descriptors, so no size is
 * needed up front); deflate runs on libuv's thread pool, beside the XML building, and CRC-32 is
 * zlib's native one over the uncompressed bytes as they pass.
 *
 * A source that throws fails the iteration. A consumer that stops early (a client that hangs
 * up) ends the source being read, which runs its `finally` blocks (database cursors close)
 * before the consumer's `return()` settles.
 */
export async function* zipStream(entries: readonly ZipEntrySource[], options: ZipStreamOptions): AsyncGenerator<Buffer> {
  const level = options.compressionLevel;
  if (!Number.isInteger(level) || level < 0 || level > 9) throw new RangeError(`zip compression level must be 0…9, got ${level}`);
  const method = level === 0 ? METHOD_STORED : METHOD_DEFLATED;
  const stamps = timestamps(options.mtime);
  const names = entries.map((entry) => entryName(entry.path));

  const written: WrittenEntry[] = [];
  let offset = 0;
  // The previous entry's data descriptor and this entry's local header go out with this entry's
  // first piece of data rather than as chunks of a few dozen bytes. Deflate's own pieces are not
  // joined into larger chunks: that measured no faster (bench/xlsx.ts's workbook rendered
  // in-process with 100 and 100,000 rows).
  let pending: Buffer | null = null;
  const withPending = (chunk: Buffer): Buffer => {
    const joined = pending === null ? chunk : Buffer.concat([pending, chunk]);
    pending = null;
    return joined;
  };

  for (let i = 0; i < entries.length; i++) {
    const entry: WrittenEntry = { name: names[i]!, method, offset, crc: 0, size: 0, compressedSize: 0 };
    const header = localFileHeader(entry, stamps);
    pending = withPending(header);
    offset += header.length;

    const data = level === 0 ? stored(entries[i]!.content(), entry) : deflated(entries[i]!.content(), level, entry);
    for await (const piece of data) {
      offset += piece.length;
      yield withPending(piece);
    }

    const descriptor = dataDescriptor(entry);
    pending = withPending(descriptor);
    offset += descriptor.length;
    written.push(entry);
  }

  yield withPending(centralDirectory(written, offset, stamps));
}

/** The source's bytes as they are (level 0), counted and CRC'd. */
async function* stored(source: AsyncIterable<Uint8Array>, entry: WrittenEntry): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    if (chunk.length === 0) continue;
    entry.crc = zlib.crc32(chunk, entry.crc);
    entry.size += chunk.length;
    entry.compressedSize += chunk.length;
    yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
}

/**
 * The source deflated, piece by piece as zlib emits it; fills in the entry's CRC and sizes.
 * The source is asked for its next chunk while zlib still compresses the last one, as long as
 * no more than MAX_DEFLATE_BACKLOG bytes wait for zlib; the consumer's pace holds back the source
 * through this generator's yields (zlib stops once its small output buffer is full).
 */
async function* deflated(source: AsyncIterable<Uint8Array>, level: number, entry: WrittenEntry): AsyncGenerator<Buffer> {
  let deflater: Deflater | null = null;
  try {
    // Leaving this loop early (a throw, or a consumer's return() reaching us at a yield) calls the
    // source's return(), which runs its finally blocks.
    for await (const chunk of source) {
      if (chunk.length === 0) continue;
      entry.crc = zlib.crc32(chunk, entry.crc);
      entry.size += chunk.length;
      deflater ??= new Deflater(level);
      deflater.write(chunk);
      for (;;) {
        for (let piece = deflater.read(); piece !== null; piece = deflater.read()) {
          entry.compressedSize += piece.length;
          yield piece;
        }
        if (deflater.backlog <= MAX_DEFLATE_BACKLOG) break;
        await deflater.changed();
      }
    }
    if (deflater === null) {
      entry.compressedSize = EMPTY_DEFLATE.length;
      yield EMPTY_DEFLATE;
      return;
    }
    deflater.end();
    for (;;) {
      for (let piece = deflater.read(); piece !== null; piece = deflater.read()) {
        entry.compressedSize += piece.length;
        yield piece;
      }
      if (deflater.ended) return;
      await deflater.changed();
    }
  } finally {
    deflater?.destroy();
  }
}

/** zlib's raw deflate stream, read by pulling: `changed()` settles when there is news. */
class Deflater {
  readonly #stream: zlib.DeflateRaw;
  #wake: (() => void) | null = null;
  #failure: Error | null = null;
  #ended = false;

  constructor(level: number) {
    this.#stream = zlib.createDeflateRaw({ level, chunkSize: DEFLATE_OUTPUT_CHUNK });
    this.#stream.on('readable', this.#notify);
    this.#stream.on('end', () => {
      this.#ended = true;
      this.#notify();
    });
    this.#stream.on('error', (error: Error) => {
      this.#failure = error;
      this.#notify();
    });
    this.#stream.on('close', this.#notify);
  }

  readonly #notify = (): void => {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  };

  /** Bytes written and not yet compressed. */
  get backlog(): number {
    return this.#stream.writableLength;
  }

  get ended(): boolean {
    return this.#ended;
  }

  write(chunk: Uint8Array): void {
    // The callback runs once zlib is done with the chunk: the backlog shrank.
    this.#stream.write(chunk, this.#notify);
  }

  end(): void {
    this.#stream.end();
  }

  /** Compressed bytes ready now (all of them, joined), or null. */
  read(): Buffer | null {
    if (this.#failure) throw this.#failure;
    return this.#stream.read() as Buffer | null;
  }

  /** Settles on output, a chunk done, the end, an error or a close; call after `read()` gave null. */
  changed(): Promise<void> {
    if (this.#failure || this.#ended) return Promise.resolve();
    if (this.#stream.destroyed) return Promise.reject(new Error('zip: deflate stream closed before its end'));
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  destroy(): void {
    this.#stream.destroy();
  }
}
