import { Socket } from 'node:net';

/** Bytes one read may bring (libuv's own suggestion for a stream's read). */
const READ_BYTES = 64 * 1024;

/** Takes a read's bytes where they lie: the next read overwrites them, so what is kept must be copied. */
export type InPlaceReader = (bytes: Buffer) => void;

/** A pg connection's socket that reads into one buffer of its own (oneBufferSocket). */
export interface OneBufferSocket extends Socket {
  /** While set, every read goes to `reader` in place, and no 'data' is emitted; null: 'data' again. */
  readInPlace(reader: InPlaceReader | null): void;
}

/**
 * A socket for a pg connection that reads into one buffer, always the same (`net`'s `onread`,
 * Node's docs: "new net.Socket([options])"), instead of a new Buffer per read.
 *
 * Why: each new Buffer is memory V8 counts, and its count is what starts a full collection. A
 * 1M-item render reads 107–147 MiB of COPY off its sockets, a third of all V8 counted (the pages
 * are the rest), and took 4–8 full collections of ~50 ms of CPU each; with its reads taken in
 * place it takes none, and the service ~30 % less CPU (bench/RESULTS.md, "2026-11-27, late
 * night"). While a page's COPY comes, copy-out.ts takes the reads in place and copy-bytes.ts
 * copies them into a buffer a page before it used.
 *
 * Everything else reads as before: each read is emitted as 'data' in a Buffer of its own, a
 * copy (a small one from Node's shared pool). TLS connections keep pg's own socket (dialect.ts):
 * TLS reads the socket itself.
 */
export function oneBufferSocket(): OneBufferSocket {
  let inPlace: InPlaceReader | null = null;
  const socket = new Socket({
    onread: {
      buffer: Buffer.allocUnsafeSlow(READ_BYTES),
      callback: (length: number, buffer: Uint8Array) => {
        const bytes = Buffer.from(buffer.buffer, buffer.byteOffset, length);
        if (inPlace) inPlace(bytes);
        else socket.emit('data', Buffer.from(bytes));
        return true;
      },
    },
  } as ConstructorParameters<typeof Socket>[0]) as OneBufferSocket;
  socket.readInPlace = (reader) => {
    inPlace = reader;
  };
  return socket;
}

/** Whether `stream` is a oneBufferSocket. */
export function readsInPlace(stream: unknown): stream is OneBufferSocket {
  return typeof (stream as Partial<OneBufferSocket>).readInPlace === 'function';
}
