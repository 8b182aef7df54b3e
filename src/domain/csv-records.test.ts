/**
 * The CSV reader (csv-records.ts through readSource) against the one it replaced: csv-parse, with
 * the options publication-source.ts gave it. On any well-formed file both give the same fields on
 * the same lines; on a broken one both refuse it, and this reader names the line.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Readable } from 'node:stream';
import { parse as csvParse } from 'csv-parse/sync';
import fc from 'fast-check';
import { AppError } from '../errors/app-error.js';
import { CsvRecordSplitter, CsvRecordTooLong, CsvSyntaxError, type CsvRecord } from './csv-records.js';
import { readSource } from './publication-source.js';

/** csv-parse as publication-source.ts ran it (bom, skip_empty_lines, strict quotes), its rows with the line each ends on. */
function csvParseRecords(text: string): CsvRecord[] {
  const rows = csvParse(text, { bom: true, info: true, skip_empty_lines: true, relax_column_count: true }) as unknown as { record: string[]; info: { lines: number } }[];
  return rows.map(({ record, info }) => ({ fields: record, line: info.lines }));
}

/** This reader over `bytes` cut into the given sizes (cycled), as an upload arrives. */
function splitterRecords(bytes: Buffer, sizes: readonly number[] = [bytes.length || 1], max = 1 << 30): CsvRecord[] {
  const splitter = new CsvRecordSplitter(max);
  const records: CsvRecord[] = [];
  for (let at = 0, k = 0; at < bytes.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]);
    records.push(...splitter.push(bytes.subarray(at, at + size)));
    at += size;
  }
  records.push(...splitter.end());
  return records;
}

const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    if (error instanceof CsvSyntaxError) return error.message;
    throw error;
  }
  return 'read';
};

// Text with every character CSV gives a meaning to, Cyrillic, emoji (a surrogate pair: 4 bytes) and spaces.
const fieldText = fc.string({ unit: fc.constantFrom('a', 'Я', 'ё', ' ', ',', '"', '\n', '\r\n', ';', '\t', '😀', '\u2028', '1', '.'), maxLength: 12 });
/** A field as a writer might put it: quoted when it must be, and sometimes when it need not. */
const written = (value: string, quoteAnyway: boolean) =>
  quoteAnyway || /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
const csvFile = fc
  .record({
    columns: fc.integer({ min: 1, max: 4 }),
    rows: fc.array(fc.array(fc.tuple(fieldText, fc.boolean()), { minLength: 4, maxLength: 4 }), { maxLength: 8 }),
    crlf: fc.boolean(),
    bom: fc.boolean(),
    trailingNewline: fc.boolean(),
    emptyLines: fc.array(fc.nat(9), { maxLength: 3 }),
  })
  .map(({ columns, rows, crlf, bom, trailingNewline, emptyLines }) => {
    const eol = crlf ? '\r\n' : '\n';
    const lines = rows.map((row) => row.slice(0, columns).map(([value, quote]) => written(value, quote)).join(','));
    for (const at of emptyLines) lines.splice(Math.min(at, lines.length), 0, '');
    const body = lines.join(eol) + (trailingNewline && lines.length > 0 ? eol : '');
    return (bom ? '\uFEFF' : '') + body;
  });

describe('CSV records (csv-records.ts) against csv-parse', () => {
  test('any well-formed file, LF or CRLF, with or without BOM, cut anywhere (inside characters too), gives csv-parse\'s fields and lines', () => {
    fc.assert(
      fc.property(csvFile, fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }), (text, sizes) => {
        const bytes = Buffer.from(text);
        const expected = csvParseRecords(text);
        // csv-parse counts a CR inside a quoted field as a line of its own; an editor, and this reader, do not.
        const lines = !expected.some((r) => r.fields.some((f) => f.includes('\r')));
        for (const got of [splitterRecords(bytes, sizes), splitterRecords(bytes)]) {
          assert.deepEqual(got.map((r) => r.fields), expected.map((r) => r.fields));
          if (lines) assert.deepEqual(got.map((r) => r.line), expected.map((r) => r.line));
        }
      }),
      { numRuns: 400 },
    );
  });

  test('doubled quotes, quoted line breaks and empty quoted fields, one byte at a time', () => {
    const text = '\uFEFFa,b\r\n"x ""quoted"", y","line\nbreak"\r\n"",""\r\n\r\n"""",\r\nlast,"Мороз ""Я"""';
    const expected = csvParseRecords(text);
    assert.deepEqual(splitterRecords(Buffer.from(text), [1]), expected);
    assert.deepEqual(expected.map((r) => r.line), [1, 3, 4, 6, 7]);
    assert.deepEqual(expected[1].fields, ['x "quoted", y', 'line\nbreak']);
  });

  test('one BOM is skipped, as csv-parse skips one: a second is text', () => {
    const text = '\uFEFF\uFEFFa,b\n1,2\n';
    for (const sizes of [[1], [2], [4], [text.length]]) assert.deepEqual(splitterRecords(Buffer.from(text), sizes), csvParseRecords(text));
    assert.equal(csvParseRecords(text)[0].fields[0], '\uFEFFa');
  });

  test('broken files are refused by both, and this reader names the line', () => {
    const cases: [string, RegExp][] = [
      ['a,b\n1,"open\n2,3\n', /^line 2: the quoted field opened here is not closed by the end of the file/],
      ['a,b\n1,x"y\n', /^line 2: a quote inside a field that does not begin with one/],
      ['a,b\n1,"x"y\n', /^line 2: text after a closing quote/],
      ['a,b\n1,"x"\rz\n', /^line 2: text after a closing quote/],
      ['a,b\n1,2\n3,"4', /^line 3: the quoted field opened here is not closed/],
    ];
    for (const [text, message] of cases) {
      assert.throws(() => csvParseRecords(text), `csv-parse refuses ${JSON.stringify(text)}`);
      for (const sizes of [[1], [2], [3], [text.length]]) assert.match(refusal(() => splitterRecords(Buffer.from(text), sizes)), message, JSON.stringify(text));
    }
  });

  test('a file cut off inside a quoted field, at any byte, is refused, never read short', () => {
    const text = 'offer_id,name\nA-1,"Холодильник ""Мороз"", 300 л"\n';
    const open = text.indexOf('"Холод');
    for (let cut = open + 1; cut < text.length - 1; cut++) {
      const bytes = Buffer.from(text).subarray(0, Buffer.byteLength(text.slice(0, cut)));
      const ends = bytes.toString().endsWith('"') && !bytes.toString().endsWith('""');
      if (ends) continue; // cut just after a closing quote: a whole field, as csv-parse reads it too
      assert.match(refusal(() => splitterRecords(bytes, [5])), /^line 2: the quoted field opened here is not closed/, `cut at ${cut}`);
    }
  });
});

describe('CSV record size (MAX_LINE_BYTES)', () => {
  test('a record of exactly the limit in bytes is read, one byte more is refused, counting UTF-8 bytes, not characters', () => {
    const record = (bytes: number) => `"${'Я'.repeat((bytes - 2) / 2)}"`; // 2 bytes a letter, plus the quotes
    const header = 'name\n';
    for (const sizes of [[1], [3], [4096]]) {
      assert.equal(splitterRecords(Buffer.from(header + record(40) + '\n'), sizes, 40).length, 2);
      assert.throws(() => splitterRecords(Buffer.from(header + record(42) + '\n'), sizes, 41), (e: unknown) => e instanceof CsvRecordTooLong && e.line === 2);
    }
  });

  test('an endless record is refused while it arrives, before it is held whole', () => {
    const splitter = new CsvRecordSplitter(10_000);
    splitter.push(Buffer.from('name\n"'));
    let pushed = 0;
    assert.throws(() => {
      for (; pushed < 100; pushed++) splitter.push(Buffer.alloc(1000, 'x'));
    }, (e: unknown) => e instanceof CsvRecordTooLong && e.line === 2);
    assert.ok(pushed <= 10, `refused after ${pushed} KB`);
  });

  test('a huge quoted field is one value, whichever chunks carry it', () => {
    const value = 'x'.repeat(300_000) + '""' + 'Я'.repeat(100_000);
    const text = `name\n"${value}"\n`;
    for (const sizes of [[65_536], [1000, 7], [text.length]]) {
      const records = splitterRecords(Buffer.from(text), sizes);
      assert.equal(records.length, 2);
      assert.equal(records[1].fields[0], value.replace('""', '"'));
    }
  });
});

describe('CSV publications through readSource', () => {
  const rows = async (text: string | Buffer) => {
    const out: { position: string; raw: unknown }[] = [];
    for await (const row of readSource(Readable.from([Buffer.from(text)]), 'csv')) out.push({ position: row.position, raw: row.raw });
    return out;
  };
  const refused = async (text: string | Buffer): Promise<string> => {
    try {
      await rows(text);
    } catch (error) {
      assert.ok(error instanceof AppError);
      assert.equal(error.code, 'invalid_publication');
      return error.message;
    }
    return 'published';
  };

  test('rows are objects of the header\'s names, positioned by the line each ends on', async () => {
    assert.deepEqual(await rows('\uFEFFoffer_id, name ,price\r\nA,"two\nlines",1.50\r\n\r\nB,Б,2\r\n'), [
      { position: 'line 3', raw: { offer_id: 'A', name: 'two\nlines', price: '1.50' } },
      { position: 'line 5', raw: { offer_id: 'B', name: 'Б', price: '2' } },
    ]);
  });

  test('a record with more or fewer fields than the header names is refused with its line', async () => {
    assert.equal(await refused('offer_id,name\nA,1\nB\n'), 'the file is not valid CSV: line 3: 1 field(s), where the header names 2');
    assert.equal(await refused('offer_id,name\nA,1,x\n'), 'the file is not valid CSV: line 2: 3 field(s), where the header names 2');
  });

  test('a broken quote is refused as not valid CSV, naming the line', async () => {
    assert.match(await refused('offer_id,name\nA,"1\n'), /^the file is not valid CSV: line 2: the quoted field opened here is not closed/);
  });

  test('invalid UTF-8 is refused before the reader sees it', async () => {
    assert.match(await refused(Buffer.concat([Buffer.from('offer_id,name\nA,'), Buffer.from([0xd0]), Buffer.from('\n')])), /not valid UTF-8/);
  });

  test('a record over MAX_LINE_BYTES is refused with its line', async () => {
    const out: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const row of readSource(Readable.from([Buffer.from(`offer_id,name\nA,${'x'.repeat(200)}\n`)]), 'csv', { maxLineBytes: 100 })) out.push(row);
      })(),
      (e: unknown) => e instanceof AppError && /^line 2: longer than 100 bytes/.test(e.message),
    );
  });
});
