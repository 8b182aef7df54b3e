import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { splitLines } from './publication-source.js';

async function collect(chunks: Buffer[], maxLineBytes = Number.MAX_SAFE_INTEGER): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of splitLines((async function* () { yield* chunks; })(), maxLineBytes)) lines.push(line.toString('utf8'));
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

  test('one long line costs about what the same bytes in short lines cost (linear, not quadratic)', async () => {
    // Compared with itself in the same run, not against a wall-clock figure: re-splitting the
    // growing rest made one 16 MB line cost ~40x the same bytes as 16 lines of 1 MB.
    const size = 16 * 1024 * 1024;
    const oneLine = chunked(Buffer.alloc(size, 'x'), 16 * 1024);
    const manyLines = chunked(Buffer.from(Array.from({ length: 16 }, () => `${'x'.repeat(size / 16 - 1)}\n`).join('')), 16 * 1024);
    const fastest = async (chunks: Buffer[]) => {
      let best = Infinity;
      for (let run = 0; run < 3; run++) {
        const started = process.hrtime.bigint();
        await collect(chunks);
        best = Math.min(best, Number(process.hrtime.bigint() - started));
      }
      return best;
    };
    const [long, short] = [await fastest(oneLine), await fastest(manyLines)];
    assert.ok(long < short * 5 + 20e6, `one 16 MB line took ${(long / 1e6).toFixed(0)} ms, 16 lines of 1 MB ${(short / 1e6).toFixed(0)} ms`);
  });
});
