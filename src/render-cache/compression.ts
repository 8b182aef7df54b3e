import { constants as zlib, createBrotliCompress, createGzip, type BrotliCompress, type Gzip } from 'node:zlib';
import type { Coding } from './interface.js';

/*
 * A strong ETag names one byte sequence per content coding (CONTRACT §4, issue #16): the first
 * answer, compressed on the fly while the render streams, and the cache's precompressed copy
 * made later must be the same bytes, on every instance. So there is one way to compress:
 * - the same parameters everywhere, spelled out rather than left to the library's defaults;
 * - brotli's size hint fixed: left unset, the encoder guesses it from the length of the first
 *   chunk it is given, and its block decisions (so its bytes, at qualities 4–9) then depend on
 *   how the input was chunked — a render streamed as it is written and a finished file read
 *   back from disk are chunked differently;
 * - no flush points: zlib and brotli then make their blocks from the input bytes alone,
 *   whatever chunks they arrive in and whenever they arrive;
 * - gzip's header carries no time (Node writes mtime 0) and a fixed OS byte.
 * Changing a parameter here changes the bytes under existing ETags: do it only together with
 * a change of the ETag's form (its `v<version>` prefix counts publications, not this).
 *
 * The levels are what the on-the-fly stream can afford while a render is being written (a
 * 14 MB CSV: gzip 6 ≈ 0.4 s, brotli 5 ≈ 0.6 s), at a few per cent more bytes than the harder
 * levels the cache once used for its own copies.
 */
const GZIP_LEVEL = 6;
const GZIP_MEM_LEVEL = 8;
const GZIP_WINDOW_BITS = 15;
const BROTLI_QUALITY = 5;
const BROTLI_WINDOW_BITS = 22;
/** Any fixed value gives fixed bytes; this one says "a large file", the size of the lists worth compressing. */
const BROTLI_SIZE_HINT = 16 * 1024 * 1024;

/** A compressor of `coding` with the one set of parameters: equal input bytes, equal output bytes. */
export function createCompressor(coding: Exclude<Coding, 'identity'>): Gzip | BrotliCompress {
  if (coding === 'gzip') {
    return createGzip({ level: GZIP_LEVEL, memLevel: GZIP_MEM_LEVEL, windowBits: GZIP_WINDOW_BITS, strategy: zlib.Z_DEFAULT_STRATEGY });
  }
  return createBrotliCompress({
    params: {
      [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_GENERIC,
      [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.BROTLI_PARAM_LGWIN]: BROTLI_WINDOW_BITS,
      [zlib.BROTLI_PARAM_SIZE_HINT]: BROTLI_SIZE_HINT,
    },
  });
}
