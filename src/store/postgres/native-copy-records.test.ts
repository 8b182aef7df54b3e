/**
 * The Node-API module that runs the records aggregates over a PostgreSQL binary COPY
 * (native/copy_records.c): what it builds from hand-made COPY data, and that every malformed
 * COPY or call is refused with a message, never a crash or a page of wrong bytes. The records
 * contract tests (src/store/*-records.contract.test.ts) hold its pages to the writers' bytes
 * against a real server.
 */
import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { SIGNATURE } from '../../../test/support/binary-copy.js';
import { CopyBytes } from './copy-bytes.js';
import { CopyRecordsQuery } from './copy-out.js';
import { copyRecordsModule } from './native-copy-records.js';
import { oneBufferSocket, type OneBufferSocket } from './one-buffer-socket.js';

const module = copyRecordsModule();

/** Full collections, and the turns in which freed Buffers' finalizers run: V8's count of external memory settles. */
async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

type Field = string | number | boolean | null;

/** A binary COPY's bytes: the header (with an extension), a tuple per row (texts, int8s, booleans, NULLs), the trailer. */
function binaryCopy(rows: readonly (readonly Field[])[], extension = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(extension.length, 4);
  const pieces = [SIGNATURE, header, extension];
  for (const row of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(row.length);
    pieces.push(count);
    for (const field of row) {
      const bytes = field === null ? null
        : typeof field === 'string' ? Buffer.from(field, 'utf8')
        : typeof field === 'boolean' ? Buffer.from([field ? 1 : 0])
        : (() => { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(field)); return b; })();
      const length = Buffer.alloc(4);
      length.writeInt32BE(bytes === null ? -1 : bytes.length);
      pieces.push(bytes ? Buffer.concat([length, bytes]) : length);
    }
  }
  pieces.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(pieces);
}

/** A CopyData message: 'd', an int32 length that counts itself, the body. */
function message(body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write('d', 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** The COPY as the server sends it: one CopyData message of the whole, in one piece. */
const messages = (copy: Buffer): Buffer[] => [message(copy)];

/** CSV records of (seq, a text, an integer, a boolean): the delimited aggregate's call over columns 0–3. */
const CSV_ARGS = ['tib', ',', '.', '\n', 0, 1, 2, 3];
const CSV_TYPES = 'itib';
const csvOf = (pieces: Buffer[]) => module!.build('price_export_delimited', CSV_ARGS, CSV_TYPES, pieces);
const csv = (copy: Buffer) => csvOf(messages(copy));

describe('the records module over a binary COPY', { skip: module === null && 'build/native/ has no price_export_copy_records.node (npm run build)' }, () => {
  it('builds the records of the rows in order: texts quoted as needed, NULLs empty, booleans as 1/0, negative integers', async () => {
    const page = await csv(binaryCopy([[1, 'a,b', 5, true], [2, 'Смартфон 😀', null, false], [3, '', -42, true]]));
    assert.equal(page?.toString('utf8'), '"a,b",5,1\nСмартфон 😀,,0\n,-42,1\n');
  });

  it('reads int2 and int4 fields too, and skips a header extension', async () => {
    const copy = binaryCopy([[7, 'x', 1, true]], Buffer.from('ext!'));
    // The seq as an int4 (4 bytes): rewrite its length and value in place.
    const at = copy.indexOf(Buffer.from([0, 4, 0, 0, 0, 8]));
    const int4 = Buffer.concat([copy.subarray(0, at + 2), Buffer.from([0, 0, 0, 4, 0, 0, 0, 7]), copy.subarray(at + 14)]);
    assert.equal((await csv(int4))?.toString('utf8'), 'x,1,1\n');
  });

  it('answers null for a COPY of no rows', async () => {
    assert.equal(await csv(binaryCopy([])), null);
  });

  it('takes constants: texts and NULLs', async () => {
    const page = await module!.build('price_export_delimited', ['lll', ';', ',', '\r\n', 0, 'c1', null, 'c3'], 'i', messages(binaryCopy([[1], [2]])));
    assert.equal(page?.toString('utf8'), 'c1;;c3\r\nc1;;c3\r\n');
  });

  it('strips the messages\' framing however they are cut into pieces', async () => {
    const copy = binaryCopy([[1, 'a', 10, true], [2, 'Я', 20, false], [3, 'c', null, true]]);
    // As a server sends it: the header in a message of its own, then a message per row, the trailer.
    const cuts = [19, 19 + 2 + 8 + 4 + 4 + 1 + 4 + 8 + 4 + 1, copy.length - 2];
    const framed = Buffer.concat([0, ...cuts].map((from, i) => message(copy.subarray(from, [...cuts, copy.length][i]))));
    const expected = 'a,10,1\nЯ,20,0\nc,,1\n';
    for (let i = 0; i <= framed.length; i++) {
      for (const j of [i, Math.min(framed.length, i + 3)]) {
        const page = await csvOf([framed.subarray(0, i), framed.subarray(i, j), framed.subarray(j)]);
        assert.equal(page?.toString('utf8'), expected, `cut at ${i} and ${j}`);
      }
    }
  });

  it('reads each row where it lies when a message holds a row, as PostgreSQL sends them: the Buffer left as it was', async () => {
    const copy = binaryCopy([[1, 'a', 10, true], [2, 'Я', 20, false]]);
    const framed = Buffer.concat([message(copy.subarray(0, 19)), message(copy.subarray(19, 55)), message(copy.subarray(55, copy.length - 2)), message(copy.subarray(copy.length - 2))]);
    const before = Buffer.from(framed);
    assert.equal((await csvOf([framed]))?.toString('utf8'), 'a,10,1\nЯ,20,0\n');
    assert.deepEqual(framed, before, 'no byte moved');
  });

  it('reads rows cut across messages anywhere (the header, a length, a value): the bodies joined in place', async () => {
    const copy = binaryCopy([[1, 'abc', 10, true], [2, 'Я', null, false], [3, '', -7, true]]);
    const expected = 'abc,10,1\nЯ,,0\n,-7,1\n';
    for (let i = 0; i <= copy.length; i++) {
      for (const j of [i, Math.min(copy.length, i + 1), Math.min(copy.length, i + 6)]) {
        const framed = Buffer.concat([message(copy.subarray(0, i)), message(copy.subarray(i, j)), message(copy.subarray(j))]);
        assert.equal((await csvOf([framed]))?.toString('utf8'), expected, `messages cut at ${i} and ${j}`);
      }
    }
  });

  it('refuses what is no whole CopyData message', async () => {
    // Each call its own bytes: a single Buffer is read in place, and may be overwritten.
    const framed = () => messages(binaryCopy([[1, 'a', 1, true]]))[0];
    await assert.rejects(csvOf([framed().subarray(0, framed().length - 1)]), /a CopyData message cut short/);
    await assert.rejects(csvOf([framed().subarray(0, 3)]), /a CopyData message cut short/);
    await assert.rejects(csvOf([framed(), Buffer.from('C\0\0\0\x05x', 'latin1')]), /no CopyData/);
    await assert.rejects(csvOf([]), /not a binary COPY signature/);
  });

  it('finds where a run of whole CopyData messages ends in a chunk (copyDataRun)', () => {
    const [one, two] = [message(Buffer.from('first')), message(Buffer.from('second row'))];
    const chunk = Buffer.concat([one, two, Buffer.from('c\0\0\0\x04'), one]);
    assert.equal(module!.copyDataRun(chunk, 0), one.length + two.length, 'up to the CopyDone');
    assert.equal(module!.copyDataRun(chunk, one.length), one.length + two.length, 'from an offset');
    assert.equal(module!.copyDataRun(chunk, chunk.length), chunk.length, 'at the end');
    const cut = Buffer.concat([one, two.subarray(0, 7)]);
    assert.equal(module!.copyDataRun(cut, 0), one.length, 'up to a message the chunk cuts');
    assert.equal(module!.copyDataRun(Buffer.concat([one, two.subarray(0, 3)]), 0), one.length, 'up to a header the chunk cuts');
    assert.throws(() => module!.copyDataRun(chunk, chunk.length + 1), /an offset in it/);
    assert.throws(() => module!.copyDataRun('x' as never, 0), /a Buffer and an offset/);
  });

  it('refuses a malformed COPY with what is wrong', async () => {
    const good = binaryCopy([[1, 'a', 1, true], [2, 'b', 2, false]]);
    const cases: [string, Buffer, RegExp][] = [
      ['no signature', Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\x01', 'latin1'), good.subarray(11)]), /not a binary COPY signature/],
      ['critical flags', Buffer.concat([good.subarray(0, 11), Buffer.from([0, 1, 0, 0]), good.subarray(15)]), /unknown critical flags/],
      ['no trailer', good.subarray(0, good.length - 2), /ended before its trailer/],
      ['cut inside a field', good.subarray(0, good.length - 5), /past the data|cut short/],
      ['data after the trailer', Buffer.concat([good, Buffer.from([0])]), /data after the trailer/],
      ['a row of another width', binaryCopy([[1, 'a', 1]]), /another number of fields/],
      ['an integer of three bytes', Buffer.concat([good.subarray(0, 21), Buffer.from([0, 0, 0, 3, 0, 0, 1]), good.subarray(33)]), /integer or boolean field of another size/],
      ['rows out of publication order', binaryCopy([[2, 'a', 1, true], [1, 'b', 2, true]]), /rows out of publication order/],
      ['an empty buffer', Buffer.alloc(0), /not a binary COPY signature/],
    ];
    for (const [what, copy, message] of cases) await assert.rejects(csv(copy), message, what);
  });

  it('refuses a NULL where every item has a value (the aggregate\'s own check)', async () => {
    await assert.rejects(module!.build('price_export_json', ['s', 0, 1], 'it', messages(binaryCopy([[1, null]]))), /a text every item has is NULL/);
  });

  it('refuses a call it cannot make, before reading anything', () => {
    const copy = messages(binaryCopy([]));
    assert.throws(() => module!.build('price_export_nothing', CSV_ARGS, CSV_TYPES, copy), /no aggregate of that name/);
    assert.throws(() => module!.build('price_export_delimited', [...CSV_ARGS, 4], CSV_TYPES, copy), /column number past columnTypes/);
    assert.throws(() => module!.build('price_export_delimited', CSV_ARGS, 'itix', copy), /one of t, i, b/);
    assert.throws(() => module!.build('price_export_delimited', [...CSV_ARGS, {}] as never, CSV_TYPES, copy), /a column number, a string or null/);
    assert.throws(() => module!.build('price_export_delimited', CSV_ARGS, CSV_TYPES, Buffer.alloc(0) as never), /an array of Buffers/);
    assert.throws(() => module!.build('price_export_delimited', CSV_ARGS, CSV_TYPES, ['bytes'] as never), /an array of Buffers/);
  });

  it('builds many pages at once on the worker threads, each its own bytes', async () => {
    const pages = await Promise.all(Array.from({ length: 64 }, (_, i) => csv(binaryCopy(Array.from({ length: 500 }, (_, r) => [r, `p${i}`, r, r % 2 === 0])))));
    pages.forEach((page, i) => {
      const expected = Array.from({ length: 500 }, (_, r) => `p${i},${r},${r % 2 === 0 ? 1 : 0}\n`).join('');
      assert.equal(page?.toString('utf8'), expected, `page ${i}`);
    });
  });

  it('builds each page from its own COPY when copy-bytes.ts hands over a buffer an earlier page gave back (larger, smaller, failed, past the kept size)', async () => {
    const rowsOf = (count: number, text: string) => Array.from({ length: count }, (_, r): Field[] => [r, text, r, true]);
    const expectedOf = (count: number, text: string) => Array.from({ length: count }, (_, r) => `${text},${r},1\n`).join('');
    // As items.ts reads a page: the messages copied into CopyBytes' buffer, read there in place,
    // the buffer given back. Longer texts first, so a shorter page read to the buffer's
    // end would find the last one's rows.
    const build = async (framed: Buffer) => {
      const bytes = new CopyBytes(module!.copyDataRun);
      bytes.record(framed, 0, framed.length);
      try {
        return await csvOf(bytes.take());
      } finally {
        bytes.release();
      }
    };
    const steps: Array<[number, string]> = [[3000, 'x'.repeat(300)], [10, 'short'], [2000, 'y'.repeat(50)], [1, 'one'], [60_000, 'z'.repeat(300)], [3, 'after-the-kept-size']];
    for (const [count, text] of steps) {
      const copy = binaryCopy(rowsOf(count, text));
      const page = await build(message(copy));
      assert.equal(page?.toString('utf8'), expectedOf(count, text), `${count} rows of ${text.slice(0, 10)}`);
      // A failed page gives its buffer back too: cut inside its last field, it reads no further.
      await assert.rejects(build(message(copy.subarray(0, copy.length - 5))), /past the data|cut short/, `${count} rows, cut`);
    }
  });

  it("counts a page's bytes once as V8's external memory, as it counts any Buffer's (counted twice, a large render collected twice as often)", async () => {
    const pieces = messages(binaryCopy(Array.from({ length: 20_000 }, (_, r): Field[] => [r, 'x'.repeat(500), r, true])));
    await collectGarbage();
    const before = module!.externalMemory();
    const page = await csvOf(pieces);
    const grown = module!.externalMemory() - before;
    assert.ok(page !== null && page.length > 10_000_000, 'a page of ~10 MB');
    assert.ok(grown >= page.length * 0.9 && grown < page.length * 1.5, `V8's external memory grew by ${grown} bytes for a page of ${page.length}`);
  });
});

const pgUrl = process.env.PRICE_EXPORT_TEST_PG_URL;

describe('the records module over a real COPY', { skip: (!pgUrl && 'no PostgreSQL in this run') || (module === null && 'the module was not built') }, () => {
  it("builds the same page whether the messages were read off the socket or parsed by pg (whose chunks it copies)", async () => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      const sql = `COPY (SELECT n, 'x' || n, n * 2, n % 2 = 0 FROM generate_series(1, 5000) AS n ORDER BY n) TO STDOUT (FORMAT binary)`;
      const expected = Array.from({ length: 5000 }, (_, i) => `x${i + 1},${2 * (i + 1)},${(i + 1) % 2 === 0 ? 1 : 0}\n`).join('');
      const page = async () => {
        const messages = await client.query(new CopyRecordsQuery(sql, new CopyBytes(module!.copyDataRun))).records;
        return (await csvOf(messages))?.toString('utf8');
      };
      assert.equal(await page(), expected, 'read off the socket');
      // A second 'data' listener: CopyRecordsQuery leaves the socket to pg, which hands each CopyData message over.
      const stream = (client as unknown as { connection: { stream: EventEmitter } }).connection.stream;
      const listener = () => undefined;
      stream.on('data', listener);
      try {
        assert.equal(await page(), expected, 'parsed by pg');
      } finally {
        stream.removeListener('data', listener);
      }
      assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
    } finally {
      await client.end();
    }
  });

  it('builds the same page from reads taken in place off a socket that reads into one buffer, and the connection goes on', async () => {
    let inPlace = 0;
    const counted = (socket: OneBufferSocket): OneBufferSocket => {
      const readInPlace = socket.readInPlace;
      socket.readInPlace = (reader) => {
        if (reader) inPlace++;
        readInPlace(reader);
      };
      return socket;
    };
    const client = new pg.Client({ connectionString: pgUrl, stream: () => counted(oneBufferSocket()) });
    await client.connect();
    try {
      // Rows long enough that the COPY takes many reads of the socket's one buffer.
      const sql = `COPY (SELECT n, repeat('x', 200) || n, n * 2, n % 2 = 0 FROM generate_series(1, 5000) AS n ORDER BY n) TO STDOUT (FORMAT binary)`;
      const expected = Array.from({ length: 5000 }, (_, i) => `${'x'.repeat(200)}${i + 1},${2 * (i + 1)},${(i + 1) % 2 === 0 ? 1 : 0}\n`).join('');
      for (let page = 0; page < 3; page++) {
        const bytes = new CopyBytes(module!.copyDataRun);
        const messages = await client.query(new CopyRecordsQuery(sql, bytes)).records;
        assert.equal((await csvOf(messages))?.toString('utf8'), expected, `page ${page}`);
        bytes.release();
      }
      assert.equal(inPlace, 3, 'each COPY read in place');
      assert.deepEqual((await client.query("SELECT 1 AS one, repeat('y', 100000) AS long")).rows[0], { one: 1, long: 'y'.repeat(100_000) });
    } finally {
      await client.end();
    }
  });
});
