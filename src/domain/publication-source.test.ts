import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Readable } from 'node:stream';
import { RawItems, readSource } from './publication-source.js';

/** The texts of the NDJSON items read from `chunks` (blank lines skipped, a line's CR dropped), each with its line number. */
async function collect(chunks: Buffer[], maxLineBytes = Number.MAX_SAFE_INTEGER): Promise<string[]> {
  const lines: string[] = [];
  for await (const group of readSource(Readable.from(chunks), 'ndjson', { raw: true, maxLineBytes })) {
    assert.ok(group instanceof RawItems);
    for (let k = 0; k < group.count; k++) lines.push(`${group.position(k)}: ${group.bytes.toString('utf8', group.bounds[2 * k], group.bounds[2 * k + 1])}`);
  }
  return lines;
}

/** What collect should give for `text`: its lines, numbered, without a CR at the end, the blank ones left out. */
const linesOf = (text: string) =>
  text.split('\n').map((line, i) => [i + 1, line.endsWith('\r') ? line.slice(0, -1) : line] as const).filter(([, line]) => line.trim() !== '').map(([n, line]) => `line ${n}: ${line}`);

/** `bytes` cut into chunks of `size`. */
const chunked = (bytes: Buffer, size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('NDJSON line splitting (#20 finding 8)', () => {
  test('any text cut anywhere gives the lines of text.split("\\n"), numbered, the blank ones left out', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: fc.constantFrom('a', 'я', '\n', '\r', '{', '"', ' ', '\u00a0') }), fc.array(fc.nat(), { maxLength: 6 }), async (text, cuts) => {
        const bytes = Buffer.from(text);
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...at].map((start, i) => bytes.subarray(start, [...at, bytes.length][i])).filter((chunk) => chunk.length > 0);
        assert.deepEqual(await collect(chunks), linesOf(text));
      }),
      { numRuns: 300 },
    );
  });

  test('a byte-order mark is dropped from line 1 only', async () => {
    assert.deepEqual(await collect([Buffer.from('\ufeff{"a":1}\n\ufeff{"b":2}\n')]), ['line 1: {"a":1}', 'line 2: \ufeff{"b":2}']);
  });

  test('a line over the limit is refused with its number before it is held whole', async () => {
    await assert.rejects(collect(chunked(Buffer.from(`short\n${'x'.repeat(50)}`), 7), 20), /line 2: longer than 20 bytes/);
    assert.deepEqual(await collect(chunked(Buffer.from(`${'x'.repeat(20)}\nok`), 3), 20), [`line 1: ${'x'.repeat(20)}`, 'line 2: ok']);
  });

  test('one long line is joined once, not once per chunk (linear, not quadratic)', async () => {
    // Counted, not timed: re-splitting the growing rest copied a 16 MB line once per chunk
    // (~8 GB of copies for 1,024 chunks) and made a 64 MB line take 20 s. Each piece of the
    // line is kept as it arrives, and joined once, at its LF.
    const size = 16 * 1024 * 1024;
    const chunks = chunked(Buffer.alloc(size, 'я'), 16 * 1024);
    const concat = Buffer.concat;
    let copied = 0;
    Buffer.concat = ((list: readonly Uint8Array[], length?: number) => {
      copied += list.reduce((sum, piece) => sum + piece.length, 0);
      return concat(list, length);
    }) as typeof Buffer.concat;
    let lines: string[];
    try {
      lines = await collect(chunks);
    } finally {
      Buffer.concat = concat;
    }
    assert.equal(lines.length, 1);
    assert.equal(lines[0], `line 1: ${'я'.repeat(size / 2)}`);
    // The stream may join chunks that wait in its buffer (text-decoding.ts's check): at most the line once more.
    assert.ok(copied <= 2 * size, `${copied} bytes copied to join one line of ${size}`);
  });

  test('the byte limit counts UTF-8 bytes, wherever the chunks cut a character', async () => {
    // 10 two-byte letters are 20 bytes: at the limit, read; one byte more, refused.
    for (const size of [1, 3, 7, 64]) {
      assert.deepEqual(await collect(chunked(Buffer.from(`${'я'.repeat(10)}\n${'я'.repeat(10)}`), size), 20), [`line 1: ${'я'.repeat(10)}`, `line 2: ${'я'.repeat(10)}`]);
      await assert.rejects(collect(chunked(Buffer.from(`ok\n${'я'.repeat(10)}x\n`), size), 20), /line 2: longer than 20 bytes/);
      await assert.rejects(collect(chunked(Buffer.from(`ok\n${'я'.repeat(10)}x`), size), 20), /line 2: longer than 20 bytes/);
    }
  });

  test('a file handed over as one chunk is read a slice at a time, nothing of it decoded at once', async () => {
    const line = JSON.stringify({ offer_id: 'A', name: 'я'.repeat(40), price: 1 });
    const count = 40_000; // ~4 MB
    const whole = Buffer.from(`${Array.from({ length: count }, () => line).join('\n')}\n`);
    const toString = Buffer.prototype.toString;
    let largest = 0;
    Buffer.prototype.toString = function (this: Buffer, ...args: unknown[]) {
      const [, start = 0, end = this.length] = args as [string?, number?, number?];
      largest = Math.max(largest, end - start);
      return toString.apply(this, args as Parameters<Buffer['toString']>);
    } as Buffer['toString'];
    let rows = 0;
    let groups = 0;
    try {
      for await (const _row of readSource(Readable.from([whole]), 'ndjson')) rows++;
      for await (const group of readSource(Readable.from([whole]), 'ndjson', { raw: true })) if (group instanceof RawItems) groups++;
    } finally {
      Buffer.prototype.toString = toString;
    }
    assert.equal(rows, count);
    assert.ok(largest <= line.length * 2, `a ${largest}-byte piece of a ${whole.length}-byte chunk decoded at once`);
    assert.ok(groups >= 4, `${groups} groups: the 4 MB chunk was not read a slice at a time`);
  });

});
