/**
 * copy-binary.ts against COPY's binary layout cut at every place a socket could cut it, and
 * against a real server's COPY when this run reaches PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { CopyBinaryParser, copyBinaryRecords } from './copy-binary.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** A binary COPY of one column: each value's bytes, or null for NULL. */
function binaryCopy(values: readonly (string | null)[], extension = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(extension.length, 4);
  const parts = [SIGNATURE, header, extension];
  for (const value of values) {
    const bytes = value === null ? null : Buffer.from(value, 'utf8');
    const row = Buffer.alloc(6);
    row.writeInt16BE(1, 0);
    row.writeInt32BE(bytes === null ? -1 : bytes.length, 2);
    parts.push(row);
    if (bytes) parts.push(bytes);
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

function parse(chunks: readonly Uint8Array[]): string {
  const parser = new CopyBinaryParser();
  const out: Buffer[] = [];
  for (const chunk of chunks) {
    const records = parser.push(chunk);
    if (records) out.push(records);
  }
  parser.end();
  return Buffer.concat(out).toString('utf8');
}

/** Multi-byte text (a split may fall inside a character), an empty record and a NULL one. */
const VALUES = [',\n{"name":"Смартфон «Галактика» 😀"}', '', null, 'x', 'a longer record\twith a tab and \\ a backslash'];
const EXPECTED = VALUES.filter((v) => v !== null).join('');

describe('binary COPY framing', () => {
  const data = binaryCopy(VALUES, Buffer.from('ext!'));

  it('gives the records whole', () => {
    assert.equal(parse([data]), EXPECTED);
  });

  it('gives the same bytes however the stream is cut in two or three (every boundary)', () => {
    for (let i = 0; i <= data.length; i++) {
      assert.equal(parse([data.subarray(0, i), data.subarray(i)]), EXPECTED, `cut at ${i}`);
      for (let j = i; j <= data.length; j += 3) {
        assert.equal(parse([data.subarray(0, i), data.subarray(i, j), data.subarray(j)]), EXPECTED, `cut at ${i} and ${j}`);
      }
    }
  });

  it('gives the same bytes a byte at a time', () => {
    assert.equal(parse([...data].map((byte) => Uint8Array.of(byte))), EXPECTED);
  });

  it('gives nothing for zero rows, and for a NULL record', () => {
    assert.equal(parse([binaryCopy([])]), '');
    assert.equal(parse([binaryCopy([null, null])]), '');
  });

  it('hands out buffers the consumer may keep (not views of the chunk it was given)', () => {
    const chunk = binaryCopy(['keep me']);
    const records = new CopyBinaryParser().push(chunk)!;
    chunk.fill(0);
    assert.equal(records.toString(), 'keep me');
  });

  it('refuses what is not one record a row, or is cut short', () => {
    assert.throws(() => parse([Buffer.from('PGCOPY\nXXXXXXXXXXXX')]), /signature/);
    const twoFields = binaryCopy(['a']);
    twoFields.writeInt16BE(2, SIGNATURE.length + 8);
    assert.throws(() => parse([twoFields]), /2 fields/);
    assert.throws(() => parse([data.subarray(0, data.length - 1)]), /before its trailer/);
    assert.throws(() => parse([data.subarray(0, data.length - 3)]), /before its trailer/);
    assert.throws(() => parse([data, Buffer.from([0])]), /after the trailer/);
  });

  it('reads its source only as fast as it is read (a slow consumer pauses the COPY)', async () => {
    const records = Array.from({ length: 1000 }, (_, i) => `record ${i};`);
    const whole = binaryCopy(records);
    let pulled = 0;
    async function* socket() {
      for (let at = 0; at < whole.length; at += 64) {
        const chunk = whole.subarray(at, at + 64);
        pulled += chunk.length;
        yield chunk;
      }
    }
    const reader = copyBinaryRecords(socket());
    const first = await reader.next();
    assert.equal(first.done, false);
    // Nothing is read ahead: the source has given what the first records needed and no more.
    assert.ok(pulled <= 64 * 2, `${pulled} bytes pulled for the first records, of ${whole.length}`);
    const pulledBefore = pulled;
    await Promise.resolve();
    assert.equal(pulled, pulledBefore);
    let rest = first.value.toString();
    for await (const chunk of reader) rest += chunk.toString();
    assert.equal(rest, records.join(''));
  });
});

const pgUrl = process.env.PRICE_EXPORT_TEST_PG_URL;

describe('binary COPY framing, from PostgreSQL', { skip: pgUrl ? false : 'no PostgreSQL in this run' }, () => {
  async function copied(select: string): Promise<string> {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      let out = '';
      for await (const records of copyBinaryRecords(client.query(copyTo(`COPY (${select}) TO STDOUT (FORMAT binary)`)))) out += records.toString('utf8');
      return out;
    } finally {
      await client.end();
    }
  }

  it("gives a text column's values, NULL and empty ones as nothing, nothing for zero rows", async () => {
    const out = await copied(`SELECT v FROM (VALUES (1, 'a'), (2, NULL), (3, ''), (4, E'ü\\\\\\t\\n')) AS t(n, v) ORDER BY n`);
    assert.equal(out, 'aü\\\t\n');
    assert.equal(await copied('SELECT 1::text WHERE false'), '');
  });

  it('gives many rows in order, across the socket reads', async () => {
    const out = await copied(`SELECT n || ',' FROM generate_series(1, 20000) AS n`);
    assert.equal(out, Array.from({ length: 20000 }, (_, i) => `${i + 1},`).join(''));
  });
});
