/*
 * A CSV publication's records found by the store's native framer (store/item-rows/native/
 * csv_frame.c, through readSource's `raw`), against csv-records.ts reading every record: the
 * same rows on the same lines, or the same refusal to the word, however the upload is cut.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { AppError } from '../../src/errors/app-error.js';
import { RawItems, readSource } from '../../src/domain/publication-source.js';
import { csvRecordFramer } from '../../src/store/item-rows/native-item-rows.js';
import type { CsvRecordFramer } from '../../src/store/types.js';

const framer = csvRecordFramer();

/** `bytes` cut into the given sizes (cycled), as an upload arrives. */
function pieces(bytes: Buffer, sizes: readonly number[]): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]);
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

/** Rows csv-records.ts read after the framer handed over, in the last `read`. */
let handedOver = 0;

/** The rows readSource gives (each framed record split as publishing.ts would ask), or its refusal. */
async function read(bytes: Buffer, options: { framed: boolean; sizes?: readonly number[]; maxLineBytes?: number; framer?: CsvRecordFramer }): Promise<unknown[] | string> {
  const rows: unknown[] = [];
  handedOver = 0;
  const input = Readable.from(pieces(bytes, options.sizes ?? [bytes.length || 1]));
  try {
    for await (const entry of readSource(input, 'csv', { raw: true, frameCsvRecords: options.framed ? (options.framer ?? framer) : null, maxLineBytes: options.maxLineBytes })) {
      if (entry instanceof RawItems) for (let k = 0; k < entry.count; k++) rows.push(entry.row(k));
      else {
        rows.push(entry);
        handedOver++;
      }
    }
  } catch (error) {
    if (error instanceof AppError) return error.detail;
    throw error;
  }
  return rows;
}

// Every character CSV gives a meaning to, and in places it breaks the grammar; Cyrillic, an emoji (4 bytes).
const piece = fc.constantFrom('a', 'Я', '😀', ' ', ',', ',', '"', '""', '\n', '\n', '\r\n', '\r', '1');
const csvLike = fc
  .record({
    header: fc.constantFrom('offer_id,name,price', 'offer_id,name', '\ufeffoffer_id,name\r\n', 'offer_id,attributes.k,name'),
    lines: fc.array(fc.array(piece, { maxLength: 14 }), { maxLength: 10 }),
  })
  .map(({ header, lines }) => Buffer.from(`${header}${header.endsWith('\n') ? '' : '\n'}${lines.map((line) => line.join('')).join('')}`));
/** Well-formed files: quoted where a field must be. */
const fieldText = fc.array(fc.constantFrom('a', 'Я', '😀', ' ', ',', '"', '\n', '\r\n', '1'), { maxLength: 8 }).map((parts) => parts.join(''));
const wellFormed = fc
  .record({ rows: fc.array(fc.tuple(fieldText, fieldText, fc.boolean()), { maxLength: 12 }), crlf: fc.boolean(), last: fc.boolean() })
  .map(({ rows, crlf, last }) => {
    const eol = crlf ? '\r\n' : '\n';
    const field = (value: string, quote: boolean) => (quote || /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
    const lines = rows.map(([a, b, quote]) => `${field(a, quote)},${field(b, !quote)}`);
    return Buffer.from(`offer_id,name${eol}${lines.join(eol)}${last ? eol : ''}`);
  });
const cuts = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 });

describe('CSV records framed natively, against csv-records.ts alone', { skip: framer === null ? 'the native item reader was not built (node scripts/build-native.mjs)' : false }, () => {
  it('gives the same rows, or the same refusal, for any text however it is cut', async () => {
    await fc.assert(
      fc.asyncProperty(csvLike, cuts, async (bytes, sizes) => {
        assert.deepEqual(await read(bytes, { framed: true, sizes }), await read(bytes, { framed: false }));
      }),
      { numRuns: 600 },
    );
  });

  it('gives the same rows for well-formed files, CRLF or LF, with or without a last line end', async () => {
    await fc.assert(
      fc.asyncProperty(wellFormed, cuts, async (bytes, sizes) => {
        const rows = await read(bytes, { framed: true, sizes });
        assert.ok(Array.isArray(rows), String(rows));
        assert.equal(handedOver, 0, 'a well-formed file is framed natively to its end');
        assert.deepEqual(rows, await read(bytes, { framed: false }));
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a record over MAX_LINE_BYTES as csv-records.ts does, whole or cut', async () => {
    const long = 'x'.repeat(300);
    for (const body of [`offer_id,name\n1,${long}\n2,b\n`, `offer_id,name\n1,a\n2,"${long}\n${long}"\n`, `offer_id,name\n1,a\n2,${long}`]) {
      const bytes = Buffer.from(body);
      const alone = await read(bytes, { framed: false, maxLineBytes: 200 });
      assert.match(String(alone), /longer than 200 bytes \(MAX_LINE_BYTES\)/);
      assert.deepEqual(await read(bytes, { framed: true, maxLineBytes: 200 }), alone);
      assert.match(String(await read(bytes, { framed: true, sizes: [7], maxLineBytes: 200 })), /longer than 200 bytes \(MAX_LINE_BYTES\)/);
    }
  });

  it('frames a record longer than many chunks a few times, not once a chunk', async () => {
    const long = `"${'Описание, "" с кавычками\n'.repeat(100_000)}"`; // ~3.4 MB, quoted, with line breaks
    const bytes = Buffer.from(`offer_id,name,description\n1,a,${long}\n2,b,c\n`);
    let calls = 0;
    const counting: CsvRecordFramer = (...args) => {
      calls++;
      return framer!(...args);
    };
    const rows = await read(bytes, { framed: true, sizes: [16 * 1024], framer: counting });
    assert.equal(handedOver, 0);
    assert.deepEqual(rows, await read(bytes, { framed: false }));
    // ~210 chunks of 16 KiB; each framing waits for as many bytes again as the record has so far.
    assert.ok(calls <= 20, `${calls} framings`);
  });

  it('hands csv-records.ts every kind of broken record, after good ones, with its line', async () => {
    const good = Array.from({ length: 500 }, (_, i) => `${i},"name ""${i}"", with a comma"`).join('\n');
    for (const [broken, why] of [
      ['7,a"b', /line 502: a quote inside a field/],
      ['7,"a"b', /line 502: text after a closing quote/],
      ['7,"a"\rb', /line 502: text after a closing quote/],
      ['7,"a\n\nb', /line 502: the quoted field opened here is not closed/],
      ['7,a,b', /line 502: 3 field\(s\), where the header names 2/],
    ] as const) {
      const bytes = Buffer.from(`offer_id,name\n${good}\n${broken}\n8,b\n`);
      const alone = await read(bytes, { framed: false });
      assert.match(String(alone), why);
      for (const sizes of [[bytes.length], [1], [13], [4096]]) assert.equal(await read(bytes, { framed: true, sizes }), alone);
    }
  });
});
