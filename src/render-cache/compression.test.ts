import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createCompressor } from './compression.js';

/** A text like an export: long enough for many compression blocks, repetitive enough to compress. */
const TEXT = Buffer.from(
  Array.from({ length: 40_000 }, (_, i) => `SKU-${i},Item ${i} ${(i * 7919) % 10007},${(10_000 + i * 37) / 100},RUB,${i % 2},${i % 5},https://shop.example/p/${i}\r\n`).join(''),
);

/** Compresses `TEXT` fed in pieces of the given sizes (cycled), with pauses between some of them. */
async function compress(coding: 'gzip' | 'br', pieces: readonly number[]): Promise<Buffer> {
  const compressor = createCompressor(coding);
  const out: Buffer[] = [];
  compressor.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve, reject) => compressor.on('end', resolve).on('error', reject));
  for (let offset = 0, i = 0; offset < TEXT.length; i++) {
    const size = pieces[i % pieces.length];
    compressor.write(TEXT.subarray(offset, offset + size));
    offset += size;
    // Let the compressor run between some writes, as it does while a render streams.
    if (i % 7 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  compressor.end();
  await ended;
  return Buffer.concat(out);
}

describe('createCompressor', () => {
  for (const coding of ['gzip', 'br'] as const) {
    test(`${coding}: the same bytes however the input is chunked (a streamed render, a file read back, one buffer)`, async () => {
      const whole = await compress(coding, [TEXT.length]);
      assert.ok(whole.length < TEXT.length / 2);
      for (const pieces of [[64 * 1024], [10_000, 64 * 1024], [1, 999, 4096], [300_000]]) {
        assert.deepEqual(await compress(coding, pieces), whole, `${coding}, pieces of ${pieces.join('/')}`);
      }
    });
  }
});
