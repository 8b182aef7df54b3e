import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Readable } from 'node:stream';
import { readSource, textLines } from './publication-source.js';

async function collect(chunks: Buffer[], maxLineBytes = Number.MAX_SAFE_INTEGER): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of textLines((async function* () { yield* chunks; })(), maxLineBytes)) lines.push(line);
  return lines;
}

/** `bytes` cut into chunks of `size`. */
const chunked = (bytes: Buffer, size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('NDJSON line splitting (#20 finding 8)', () => {
  test('any text cut anywhere gives the lines of text.split("\\n") (a trailing LF ends the last line)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: fc.constantFrom('a', 'я', '\n', '\r', '{', '"') }), fc.array(fc.nat(), { maxLength: 6 }), async (text, cuts) => {
        const bytes = Buffer.from(text);
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...at].map((start, i) => bytes.subarray(start, [...at, bytes.length][i]));
        const expected = text.split('\n');
        if (expected[expected.length - 1] === '') expected.pop();
        assert.deepEqual(await collect(chunks), expected);
      }),
      { numRuns: 300 },
    );
  });

  test('a line over the limit is refused with its number before it is held whole', async () => {
    await assert.rejects(collect(chunked(Buffer.from(`short\n${'x'.repeat(50)}`), 7), 20), /line 2: longer than 20 bytes/);
    assert.deepEqual(await collect(chunked(Buffer.from(`${'x'.repeat(20)}\nok`), 3), 20), ['x'.repeat(20), 'ok']);
  });

  test('one long line is measured once, not once per chunk (linear, not quadratic)', async () => {
    // Counted, not timed: re-splitting the growing rest copied a 16 MB line once per chunk
    // (~8 GB of copies for 1,024 chunks) and made a 64 MB line take 20 s. Each piece of the
    // line is measured in bytes once, as it arrives, and joined once, at its LF.
    const size = 16 * 1024 * 1024;
    const chunks = chunked(Buffer.alloc(size, 'я'), 16 * 1024);
    const byteLength = Buffer.byteLength;
    let measured = 0;
    Buffer.byteLength = ((text: string) => {
      measured += text.length;
      return byteLength(text);
    }) as typeof Buffer.byteLength;
    try {
      const lines = await collect(chunks);
      assert.equal(lines.length, 1);
      assert.equal(lines[0], 'я'.repeat(size / 2));
    } finally {
      Buffer.byteLength = byteLength;
    }
    assert.ok(measured <= size / 2, `${measured} characters measured to split one line of ${size / 2}`);
  });

  test('the byte limit counts UTF-8 bytes, wherever the chunks cut a character', async () => {
    // 10 two-byte letters are 20 bytes: at the limit, read; one byte more, refused.
    for (const size of [1, 3, 7, 64]) {
      assert.deepEqual(await collect(chunked(Buffer.from(`${'я'.repeat(10)}\n${'я'.repeat(10)}`), size), 20), ['я'.repeat(10), 'я'.repeat(10)]);
      await assert.rejects(collect(chunked(Buffer.from(`ok\n${'я'.repeat(10)}x\n`), size), 20), /line 2: longer than 20 bytes/);
      await assert.rejects(collect(chunked(Buffer.from(`ok\n${'я'.repeat(10)}x`), size), 20), /line 2: longer than 20 bytes/);
    }
  });

  test('a file handed over as one chunk is decoded a slice at a time, not into one string', async () => {
    const line = JSON.stringify({ offer_id: 'A', name: 'я'.repeat(40), price: 1 });
    const count = 40_000; // ~4 MB
    const whole = Buffer.from(`${Array.from({ length: count }, () => line).join('\n')}\n`);
    const decode = TextDecoder.prototype.decode;
    let largest = 0;
    TextDecoder.prototype.decode = function (input?: AllowSharedBufferSource, options?: TextDecodeOptions) {
      largest = Math.max(largest, input?.byteLength ?? 0);
      return decode.call(this, input, options);
    };
    let rows = 0;
    try {
      for await (const _row of readSource(Readable.from([whole]), 'ndjson')) rows++;
    } finally {
      TextDecoder.prototype.decode = decode;
    }
    assert.equal(rows, count);
    assert.ok(largest <= 1024 * 1024, `a ${largest}-byte piece of a ${whole.length}-byte chunk decoded at once`);
  });
});
