/**
 * copy-binary.ts against COPY's binary layout cut at every place a socket could cut it, and
 * copy-out.ts (with copy-frames.ts) against a real server's COPY when this run reaches PostgreSQL.
 */
import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import pg from 'pg';
import { CopyBinaryParser } from './copy-binary.js';
import { CopyRecordsQuery } from './copy-out.js';
import { binaryCopyPieces, SIGNATURE } from '../../../test/support/binary-copy.js';

/** A binary COPY of one column: each value's bytes, or null for NULL. */
const binaryCopy = (values: readonly (string | null)[], extension?: Buffer): Buffer => Buffer.concat(binaryCopyPieces(values, extension));

function parse(chunks: readonly Uint8Array[]): string {
  const parser = new CopyBinaryParser();
  const out: Buffer[] = [];
  chunks.forEach((chunk, i) => {
    parser.push(chunk);
    // Taken out now and then, as a reader of a stream would.
    if (i % 2) out.push(...parser.take());
  });
  parser.end();
  out.push(...parser.take());
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
    const whole = binaryCopy(['keep me', 'not me']);
    const firstRecordEnds = SIGNATURE.length + 8 + 6 + 'keep me'.length;
    const chunk = Buffer.from(whole.subarray(0, firstRecordEnds));
    const parser = new CopyBinaryParser();
    parser.push(chunk);
    const records = parser.take();
    chunk.fill(0);
    parser.push(whole.subarray(firstRecordEnds));
    parser.end();
    assert.equal(Buffer.concat(records).toString(), 'keep me');
  });

  it('hands out blocks of whole records, a record longer than a block in one of its own, a small page in a small block', () => {
    const small = new CopyBinaryParser();
    small.push(binaryCopy(['a', 'b']));
    small.end();
    const [block] = small.take();
    assert.equal(block.toString(), 'ab');
    assert.ok(block.buffer.byteLength <= 64 * 1024, `a two-record page holds ${block.buffer.byteLength} bytes`);

    const values = ['a', 'b', 'c', 'd', 'e'].map((letter) => letter.repeat(300_000)).concat('z'.repeat(2_500_000), 'y');
    const data = binaryCopy(values);
    const parser = new CopyBinaryParser();
    for (let at = 0; at < data.length; at += 65_536) parser.push(data.subarray(at, at + 65_536));
    parser.end();
    const blocks = parser.take();
    assert.equal(Buffer.concat(blocks).toString(), values.join(''));
    const recordEnds = new Set(values.map((_, i) => values.slice(0, i + 1).join('').length));
    let at = 0;
    for (const block of blocks) {
      at += block.length;
      assert.ok(recordEnds.has(at), `a block ends at ${at}, inside a record`);
    }
    assert.ok(blocks.length >= 3, `${blocks.length} blocks`);
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
});

const pgUrl = process.env.PRICE_EXPORT_TEST_PG_URL;

describe('COPY records from PostgreSQL', { skip: pgUrl ? false : 'no PostgreSQL in this run' }, () => {
  async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }
  const copied = (client: pg.Client, select: string) =>
    client.query(new CopyRecordsQuery(`COPY (${select}) TO STDOUT (FORMAT binary)`)).records.then((records) => Buffer.concat(records).toString('utf8'));

  it("gives a text column's values, NULL and empty ones as nothing, nothing for zero rows", async () => {
    await withClient(async (client) => {
      assert.equal(await copied(client, `SELECT v FROM (VALUES (1, 'a'), (2, NULL), (3, ''), (4, E'ü\\\\\\t\\n')) AS t(n, v) ORDER BY n`), 'aü\\\t\n');
      assert.equal(await copied(client, 'SELECT 1::text WHERE false'), '');
    });
  });

  it('gives many rows in order, across the socket reads', async () => {
    await withClient(async (client) => {
      const out = await copied(client, `SELECT n || ',' FROM generate_series(1, 20000) AS n`);
      assert.ok(out === Array.from({ length: 20000 }, (_, i) => `${i + 1},`).join(''), `${out.length} characters`);
    });
  });

  it("reads the rows off the socket itself (pg parses no row's message), notices between rows skipped", async () => {
    await withClient(async (client) => {
      let parsedByPg = 0;
      (client as unknown as { connection: EventEmitter }).connection.on('copyData', () => parsedByPg++);
      await client.query(`CREATE FUNCTION pg_temp.noisy(n int) RETURNS text LANGUAGE plpgsql AS $$
        BEGIN IF n % 1000 = 0 THEN RAISE NOTICE 'row %', n; END IF; RETURN n || ','; END $$`);
      const out = await copied(client, 'SELECT pg_temp.noisy(n) FROM generate_series(1, 5000) AS n');
      assert.equal(out, Array.from({ length: 5000 }, (_, i) => `${i + 1},`).join(''));
      assert.equal(parsedByPg, 0);
      assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
    });
  });

  it('fails with the server, or on a statement that is not a COPY TO, and leaves the connection usable', async () => {
    await withClient(async (client) => {
      await assert.rejects(copied(client, `SELECT (1 / (n - 15000))::text FROM generate_series(1, 20000) AS n`), /division by zero/);
      await assert.rejects(client.query(new CopyRecordsQuery('SELECT 1')).records, /returned rows/);
      await assert.rejects(client.query(new CopyRecordsQuery('COPY (SELECT 1, 2) TO STDOUT (FORMAT binary)')).records, /2 fields/);
      assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1);
    });
  });
});
