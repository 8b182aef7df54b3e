import { Readable } from 'node:stream';
import yazl from 'yazl';

/** One file of the archive; `content` is called only when the archive reaches it. */
export interface ZipEntrySource {
  path: string;
  content(): AsyncIterable<Uint8Array>;
}

export interface ZipStreamOptions {
  /** Modification time of every entry: the same input gives the same bytes. */
  mtime: Date;
  /** zlib deflate level, 1 (fast) … 9 (small). */
  compressionLevel: number;
}

/**
 * A deflated zip archive as an async iterable of chunks. Entries are written one after
 * another, each streamed from its source with backpressure (yazl uses data descriptors, so no
 * size is needed up front); deflate runs on libuv's thread pool, beside the XML building.
 *
 * A source that throws fails the iteration. A consumer that stops early (a client that hangs
 * up) ends the source being read, which runs its `finally` blocks (database cursors close).
 */
export async function* zipStream(entries: readonly ZipEntrySource[], options: ZipStreamOptions): AsyncGenerator<Buffer> {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as Readable;
  const reading = new Set<Readable>();
  const fail = (error: unknown): void => {
    output.destroy(error instanceof Error ? error : new Error(String(error)));
  };
  zip.on('error', fail);

  for (const entry of entries) {
    zip.addReadStreamLazy(entry.path, { mtime: options.mtime, compressionLevel: options.compressionLevel }, (callback) => {
      const source = Readable.from(entry.content(), { objectMode: false });
      reading.add(source);
      source.once('close', () => reading.delete(source));
      // yazl does not watch a lazily opened stream for errors.
      source.once('error', fail);
      callback(null, source);
    });
  }
  zip.end();

  try {
    for await (const chunk of output) yield chunk as Buffer;
  } finally {
    for (const source of reading) source.destroy();
  }
}
