/**
 * The JSON reader (json-items.ts through readSource) against the one it replaced: stream-json's
 * pick + streamArray, kept here as it was in publication-source.ts. On hostile input both must
 * give the same items, or both refuse the file with the same kind of error.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pipeline, Readable, type Duplex } from 'node:stream';
import fc from 'fast-check';
import pick from 'stream-json/filters/pick.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { AppError } from '../errors/app-error.js';
import { itemValue, JsonItemSplitter } from './json-items.js';
import type { JsonItemFramer } from '../store/types.js';
import { jsonItemFramer } from '../store/item-rows/native-item-rows.js';

/** The native framer where it was built (node scripts/build-native.mjs); the tests then hold it to the scanner too. */
const FRAMER = jsonItemFramer();
import { readSource } from './publication-source.js';
import { decodedAsUtf8 } from './text-decoding.js';

// ---------------------------------------------------------------------------------------------
// The reader before json-items.ts, as it was (publication-source.ts, commit 2182f08).

function chain(input: Readable, ...stages: Duplex[]): Duplex {
  return pipeline([input, ...stages] as unknown as [Readable, Duplex], () => undefined) as unknown as Duplex;
}

async function* streamJsonRows(input: Readable): AsyncIterable<{ position: string; raw: unknown }> {
  const stream = chain(input, decodedAsUtf8('utf-8'));
  try {
    const first = await peekFirstCharacter(stream);
    if (first !== '[' && first !== '{') throw new AppError('invalid_publication', 'a JSON publication must be an array of items or an object {"items": [...]}');
    let itemsKeys = 0;
    const onlyItems = (stack: readonly unknown[]) => {
      if (stack.length !== 1 || stack[0] !== 'items') return false;
      if (++itemsKeys > 1) throw new AppError('invalid_publication', 'the key "items" appears twice in the top-level object');
      return true;
    };
    const items = first === '[' ? chain(stream, streamArray.withParserAsStream()) : chain(stream, pick.withParserAsStream({ filter: onlyItems }), streamArray.asStream());
    try {
      for await (const { key, value } of items as AsyncIterable<{ key: number; value: unknown }>) yield { position: `items[${key}]`, raw: value };
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError('invalid_publication', `the file is not valid JSON: ${(error as Error).message}`);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('invalid_publication', `the file could not be read: ${(error as Error).message}`);
  }
}

async function peekFirstCharacter(input: Duplex): Promise<string> {
  const seen: Buffer[] = [];
  for (;;) {
    const chunk = input.read() as Buffer | null;
    if (chunk === null) {
      if (input.readableEnded || input.destroyed) break;
      await new Promise<void>((resolve, reject) => {
        const done = () => { input.off('readable', done); input.off('end', done); input.off('error', fail); resolve(); };
        const fail = (error: Error) => { input.off('readable', done); input.off('end', done); reject(error); };
        input.once('readable', done).once('end', done).once('error', fail);
      });
      continue;
    }
    seen.push(chunk);
    let text = Buffer.concat(seen);
    if (text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf) text = text.subarray(3);
    const first = text.toString('utf8').trimStart()[0];
    if (first !== undefined) {
      input.unshift(text);
      return first;
    }
  }
  if (input.errored) throw input.errored;
  throw new AppError('invalid_publication', 'the file is empty');
}

// ---------------------------------------------------------------------------------------------

type Outcome = { rows: [string, unknown][] } | { refused: string; kind: string };

/** The kind of a refusal, as a publisher would act on it. */
function kindOf(detail: string): string {
  if (/not valid UTF-8/.test(detail)) return 'utf-8';
  if (/the file is empty/.test(detail)) return 'empty';
  if (/must be an array of items or an object/.test(detail)) return 'not an array';
  if (/"items" appears twice/.test(detail)) return 'items twice';
  if (/not valid JSON|could not be read/.test(detail)) return 'not JSON';
  return `other: ${detail}`;
}

async function outcome(rows: AsyncIterable<{ position: string; raw: unknown }>): Promise<Outcome> {
  const read: [string, unknown][] = [];
  try {
    for await (const row of rows) read.push([row.position, row.raw]);
    return { rows: read };
  } catch (error) {
    assert.ok(error instanceof AppError, `not a refusal: ${String(error)}`);
    assert.equal(error.code, 'invalid_publication');
    return { refused: error.detail, kind: kindOf(error.detail) };
  }
}

/** `bytes` in chunks of `size` (1: every byte its own chunk, so every boundary is crossed). */
const chunked = (bytes: Buffer, size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

const ours = (bytes: Buffer, size = 64 * 1024, maxItemBytes?: number) => outcome(readSource(Readable.from(chunked(bytes, size)), 'json', { maxLineBytes: maxItemBytes }));
const theirs = (bytes: Buffer, size = 64 * 1024) => outcome(streamJsonRows(Readable.from(chunked(bytes, size))));

/**
 * The splitter alone, fed exactly these chunks: through a stream, chunks that wait in a
 * buffer are joined before they are read, so a test through readSource may never see a boundary.
 */
function split(bytes: Buffer, size: number, framer: JsonItemFramer | null = null): Outcome {
  const splitter = new JsonItemSplitter(Number.MAX_SAFE_INTEGER, framer);
  const rows: [string, unknown][] = [];
  try {
    for (const chunk of chunked(bytes, size)) rows.push(...splitter.push(chunk).map((item): [string, unknown] => [`items[${item.index}]`, itemValue(item)]));
    splitter.end();
    return { rows };
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return { refused: error.detail, kind: kindOf(error.detail) };
  }
}

/** Both readers give the same rows, or both refuse with the same kind of error; returns ours. */
async function assertSame(input: string | Buffer, size?: number): Promise<Outcome> {
  const bytes = typeof input === 'string' ? Buffer.from(input) : input;
  const [a, b] = [await ours(bytes, size), await theirs(bytes, size)];
  const what = `${JSON.stringify(bytes.toString('utf8').slice(0, 120))} in chunks of ${size ?? 'any'}`;
  // The splitter leaves bad UTF-8 to the check before it.
  if (size !== undefined && !('kind' in a && a.kind === 'utf-8')) {
    const direct = split(bytes, size);
    assert.deepEqual('kind' in direct ? direct.kind : direct, 'kind' in a ? a.kind : a, `${what}, fed to the splitter directly`);
    // The store's native framer, where built, changes nothing: the same rows, or the same refusal to the byte.
    if (FRAMER !== null) assert.deepEqual(split(bytes, size, FRAMER), direct, `${what}, framed natively`);
  }
  if (FRAMER !== null) {
    const framed = await outcome(readSource(Readable.from(chunked(bytes, size ?? 64 * 1024)), 'json', { frameJsonItems: FRAMER }));
    assert.deepEqual(framed, a, `${what}, through readSource framed natively`);
  }
  if ('rows' in b) assert.deepEqual(a, b, what);
  else assert.equal('kind' in a ? a.kind : `rows ${JSON.stringify(a.rows).slice(0, 200)}`, b.kind, `${what}: ours ${JSON.stringify(a)}, stream-json's ${b.refused}`);
  return a;
}

/** Items whose strings hold every character that means something to a scanner. */
const TRICKY = [
  { offer_id: 'A', name: 'скобки [ ] { } , : и кавычки " и \\ обратная черта', price: 1 },
  { offer_id: 'B\\', name: '\\"', price: '2.50', attributes: { '}': ']', '\\\\': '"[{' } },
  { offer_id: 'C', name: 'emoji 📱 and \u0000 \u001f \u2028', competitors: [{ name: 'x', price: 1 }, { name: '{"items":[]}', price: 2 }] },
  'a string item', 42, -1.5e3, true, null, [], {}, [[['deep']]],
];

describe('the JSON reader against stream-json (issue #18)', () => {
  test('the same rows for tricky strings, in every chunking down to one byte at a time', async () => {
    const array = JSON.stringify(TRICKY);
    const object = JSON.stringify({ before: { items: [1, 2] }, items: TRICKY, after: '"items"' });
    for (const text of [array, object, JSON.stringify(TRICKY, null, '\t').replaceAll('\n', '\r\n'), `\ufeff${array}`, `\ufeff \r\n${object}\t\r\n`]) {
      for (const size of [1, 2, 3, 7, 64 * 1024]) {
        const result = await assertSame(text, size);
        assert.ok('rows' in result && result.rows.length === TRICKY.length, `${text.slice(0, 40)}: ${JSON.stringify(result).slice(0, 200)}`);
      }
    }
  });

  test('any JSON array or {"items": …} envelope, cut anywhere, gives the rows of JSON.parse', async () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'я', '"', '\\', '[', ']', '{', '}', ',', ':', ' ', '\n', '\u0001', '📱') });
    const value = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(text, tie('value'), { maxKeys: 3 })),
    })).value;
    await fc.assert(
      fc.asyncProperty(fc.array(value, { maxLength: 6 }), fc.dictionary(text.filter((k) => k !== 'items'), value, { maxKeys: 2 }), fc.boolean(), fc.nat({ max: 2 }), fc.integer({ min: 1, max: 40 }), async (items, others, wrapped, indent, size) => {
        const document = wrapped ? { ...others, items } : items;
        const result = await assertSame(JSON.stringify(document, null, indent), size);
        assert.deepEqual(result, { rows: items.map((item, i) => [`items[${i}]`, JSON.parse(JSON.stringify(item))]) });
      }),
      { numRuns: 300 },
    );
  });

  test('long strings with an escape, a quote or a control character at every offset: the same rows or refusal', async () => {
    // The native framer reads 64 bytes at a time: each stop at each place in the first two blocks.
    for (let offset = 0; offset < 64; offset++) {
      const plain = 'aяb'.repeat(14).slice(0, offset);
      for (const stop of ['\\"', '\\\\', '\\u0001', '\\n', '\n', '\u0001', '\u001f', '\u007f']) {
        const text = `[{"name":"${plain}${stop}${plain}","n":1},"${stop}${plain}${plain}"]`;
        for (const size of [1, 17, 64 * 1024]) await assertSame(text, size);
      }
    }
  });

  test('any bytes after "[", JSON or not: the native framer frames them as the scanner does, across its 64-byte blocks', { skip: FRAMER === null && 'the native item reader was not built (node scripts/build-native.mjs)' }, () => {
    // Quotes, backslash runs and brackets wherever they fall in a block or across two, in strings
    // or out of them (where a backslash escapes nothing): the same rows, or the same refusal to the byte.
    const piece = fc.constantFrom('"', '\\', '{', '}', '[', ']', ',', ' ', 'a', 'я', ':', '1', '"\\\\"', '"\\""', '"a\\\\\\""', '"[{"', '{"k":[1,"]"]}');
    const soup = fc.array(piece, { maxLength: 120 }).map((pieces) => pieces.join(''));
    // And JSON whose long strings hold brackets, quotes and backslash runs, carried across blocks.
    const text = fc.string({ unit: fc.constantFrom('a', 'я', '"', '\\', '[', ']', '{', '}', ','), maxLength: 150 });
    const json = fc.array(fc.oneof(text, fc.dictionary(text, text, { maxKeys: 3 })), { maxLength: 4 }).map((value) => JSON.stringify(value));
    const body = fc.oneof(soup, json);
    fc.assert(
      fc.property(fc.array(body, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 70 }), fc.constantFrom(1, 7, 64, 100, 64 * 1024), (bodies, pad, size) => {
        const text = `[${' '.repeat(pad)}${bodies.map((body) => `{"k":${body}}`).join(',')}]`;
        const bytes = Buffer.from(text);
        assert.deepEqual(split(bytes, size, FRAMER), split(bytes, size), `${JSON.stringify(text)} in chunks of ${size}`);
      }),
      { numRuns: 3000 },
    );
  });

  test('a file cut off at any byte is refused by both, never published short', async () => {
    const bytes = Buffer.from(JSON.stringify({ meta: { a: [1, '}'] }, items: TRICKY.slice(0, 3) }));
    for (let end = 0; end < bytes.length; end++) {
      const result = await assertSame(bytes.subarray(0, end), 5);
      assert.ok('refused' in result, `cut at byte ${end}: ${JSON.stringify(result).slice(0, 200)}`);
    }
    assert.deepEqual(await ours(Buffer.from('[1,{"a":"b')), { refused: 'the file is not valid JSON: the file ends inside items[1] (byte 11)', kind: 'not JSON' });
    assert.deepEqual(await ours(Buffer.from('{"items":[1] ')), { refused: 'the file is not valid JSON: the file ends before the object is closed (byte 14)', kind: 'not JSON' });
  });

  test('trailing garbage, a missing or extra comma, bad tokens: the file is not valid JSON', async () => {
    for (const text of [
      '[1] x', '[{"a":1}]]', '{"items":[]}}', '[1,]', '[,1]', '[1 2]', '[{"a":1}{"b":2}]', '[{"a":1]', '[{"a":1}', '[tru]', '[01]', '["\\x"]', '["a\nb"]',
      '{"items":[1] "b":2}', '{"items" [1]}', '{items:[1]}', '{"items":[1],}', '[1]\n[2]', '{"items":5}', '{"items":{"a":1}}', '{"a":[1,}', '{"a":}',
      '{"a":[1,},"items":[1]}', '{"a":tru,"items":[1]}', '{"a":{"b" 1},"items":[]}', '{"items":[],"z":"\\q"}',
    ]) {
      for (const size of [1, 1024]) {
        const result = await assertSame(text, size);
        assert.equal('kind' in result && result.kind, 'not JSON', `${text}: ${JSON.stringify(result)}`);
      }
    }
  });

  test('a refusal names its byte, counted in UTF-8 past two-byte letters and a BOM, in any chunking', async () => {
    for (const size of [1, 2, 5, 1024]) {
      assert.deepEqual(split(Buffer.from('["яя" x]'), size), { refused: 'the file is not valid JSON: expected "," or "]" after items[0] (byte 9)', kind: 'not JSON' });
      assert.deepEqual(split(Buffer.from('\ufeff{"я":1 "items":[]}'), size), { refused: 'the file is not valid JSON: expected "," or "}" in the top-level object (byte 12)', kind: 'not JSON' });
      assert.deepEqual(split(Buffer.from('[{"name":"я"}'), size), { refused: 'the file is not valid JSON: the file ends before the array is closed (byte 15)', kind: 'not JSON' });
    }
  });

  test('a top-level value that is not an array or an object, and an empty file, are refused as such', async () => {
    for (const text of ['"items"', '42', 'null', 'true', '-1', 'x[1]', '\ufeff"a"']) assert.deepEqual(await assertSame(text), { refused: 'a JSON publication must be an array of items or an object {"items": [...]}', kind: 'not an array' });
    for (const text of ['', ' \n\t ', '\ufeff', '\ufeff  ']) assert.equal((await assertSame(text, 1) as { kind: string }).kind, 'empty');
  });

  test('an object without "items" has no rows; a nested "items" is not the top-level key; a second top-level "items" is refused', async () => {
    assert.deepEqual(await assertSame('{"count":2,"meta":{"items":[1,2]}}'), { rows: [] });
    assert.deepEqual(await assertSame('{"meta":{"items":[1,2]},"items":[3]}', 1), { rows: [['items[0]', 3]] });
    assert.deepEqual(await assertSame('{"it\\u0065ms":[true]}'), { rows: [['items[0]', true]] }, 'a key is compared once its escapes are read');
    const twice = await assertSame('{"items":[1],"meta":1,"items":[2]}', 1);
    assert.equal('kind' in twice && twice.kind, 'items twice');
  });

  test('invalid UTF-8 anywhere is refused with the same message by both', async () => {
    const cases = [
      Buffer.concat([Buffer.from('[{"offer_id":"A","name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('","price":1}]')]),
      Buffer.concat([Buffer.from('[\n{"name":"я"},\n{"name":"'), Buffer.from([0xd0]), Buffer.from('"}]')]),
      Buffer.concat([Buffer.from('{"items":[1], "x":"'), Buffer.from([0xff]), Buffer.from('"}')]),
      Buffer.from([0xef, 0xbb]),
    ];
    for (const bytes of cases) {
      for (const size of [1, 4, 1024]) {
        const [a, b] = [await ours(bytes, size), await theirs(bytes, size)];
        assert.ok('refused' in a && 'refused' in b, JSON.stringify([a, b]));
        assert.equal(a.kind, 'utf-8');
        assert.equal(a.refused, b.refused);
      }
    }
  });

  test('deep nesting inside an item is read as JSON.parse reads it; unbalanced, it is refused', async () => {
    const depth = 50_000;
    const deep = `[{"offer_id":"D","deep":${'['.repeat(depth)}"x"${']'.repeat(depth)}},2]`;
    const result = await ours(Buffer.from(deep), 1000);
    assert.ok('rows' in result, 'refused' in result ? result.refused : '');
    assert.deepEqual(result.rows.map(([position]) => position), ['items[0]', 'items[1]']);
    let level = (result.rows[0][1] as { deep: unknown }).deep;
    for (let i = 0; i < depth; i++) level = (level as unknown[])[0];
    assert.equal(level, 'x');
    await assertSame(`[{"deep":${'['.repeat(200)}1${']'.repeat(200)}}]`, 3);
    assert.equal((await assertSame(`[{"deep":${'['.repeat(200)}1${']'.repeat(199)}}]`, 3) as { kind: string }).kind, 'not JSON');
    assert.equal((await assertSame(`[{"deep":${'{'.repeat(100)}}]`, 3) as { kind: string }).kind, 'not JSON');
  });

  test('a huge string is one value, whichever chunks carry it', async () => {
    const name = 'я"\\{['.repeat(400_000); // 2.8 M characters, 4.4 MB of JSON
    const text = JSON.stringify([{ offer_id: 'H', name, price: 1 }, { offer_id: 'I', name: 'after', price: 2 }]);
    const result = await assertSame(text, 4096);
    assert.ok('rows' in result);
    assert.equal((result.rows[0][1] as { name: string }).name, name);
    assert.equal((result.rows[1][1] as { name: string }).name, 'after');
  });

  test('an item, or an ignored top-level value, over MAX_LINE_BYTES refuses the file with its position before it is held', async () => {
    const item = JSON.stringify({ offer_id: 'A', name: 'x'.repeat(100), price: 1 });
    const limit = item.length;
    assert.deepEqual(await ours(Buffer.from(`[${item},${item}]`), 7, limit), { rows: [['items[0]', JSON.parse(item)], ['items[1]', JSON.parse(item)]] }, 'exactly the limit is read');
    const longer = JSON.stringify({ offer_id: 'B', name: 'x'.repeat(101), price: 1 });
    for (const size of [1, 7, 4096]) {
      assert.deepEqual(await ours(Buffer.from(`[${item}, ${longer}]`), size, limit), { refused: `items[1]: longer than ${limit} bytes (MAX_LINE_BYTES); nothing was published`, kind: `other: items[1]: longer than ${limit} bytes (MAX_LINE_BYTES); nothing was published` });
      const ignored = await ours(Buffer.from(`{"meta":${longer},"items":[${item}]}`), size, limit);
      assert.match('refused' in ignored ? ignored.refused : '', /^the top-level key "meta": longer than \d+ bytes/);
    }
    // The limit is in UTF-8 bytes, wherever a chunk cuts a two-byte letter.
    const cyrillic = JSON.stringify({ offer_id: 'A', name: 'я'.repeat(50), price: 1 });
    const cyrillicLimit = Buffer.byteLength(cyrillic);
    const oneByteMore = JSON.stringify({ offer_id: 'A', name: `${'я'.repeat(50)}x`, price: 1 });
    for (const size of [1, 3, 7, 4096]) {
      assert.deepEqual(await ours(Buffer.from(`[${cyrillic}]`), size, cyrillicLimit), { rows: [['items[0]', JSON.parse(cyrillic)]] });
      assert.deepEqual(await ours(Buffer.from(`[${cyrillic},${oneByteMore}]`), size, cyrillicLimit), { refused: `items[1]: longer than ${cyrillicLimit} bytes (MAX_LINE_BYTES); nothing was published`, kind: `other: items[1]: longer than ${cyrillicLimit} bytes (MAX_LINE_BYTES); nothing was published` });
    }
    // Refused as soon as the limit is passed, not when the item ends: a single endless item is never held.
    let fed = 0;
    const endless = Readable.from((function* () {
      yield Buffer.from('[{"name":"');
      for (;;) {
        fed += 1024;
        yield Buffer.alloc(1024, 'x');
      }
    })());
    const refusal = await outcome(readSource(endless, 'json', { maxLineBytes: 1024 * 1024 }));
    assert.match('refused' in refusal ? refusal.refused : '', /^items\[0\]: longer than 1048576 bytes/);
    assert.ok(fed < 2 * 1024 * 1024, `${fed} bytes read before the refusal`);
  });

  test('a file handed over as one chunk is parsed a slice at a time, not all its items before the first row', async () => {
    const item = JSON.stringify({ offer_id: 'A', name: 'я'.repeat(40), price: 1 });
    const count = 40_000; // ~4 MB
    const whole = Buffer.from(`[${Array.from({ length: count }, () => item).join(',')}]`);
    const parse = JSON.parse;
    let parsed = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
      parsed++;
      return parse(text, reviver);
    }) as typeof JSON.parse;
    let parsedAtFirstRow = -1;
    let rows = 0;
    try {
      for await (const _row of readSource(Readable.from([whole]), 'json')) if (rows++ === 0) parsedAtFirstRow = parsed;
    } finally {
      JSON.parse = parse;
    }
    assert.equal(rows, count);
    assert.ok(parsedAtFirstRow > 0 && parsedAtFirstRow < count / 3, `${parsedAtFirstRow} of ${count} items parsed before the first row`);
  });
});
