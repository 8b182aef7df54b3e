/**
 * copy-frames.ts against a COPY TO's messages as a server sends them, cut at every place a
 * socket could cut them: the records read (whole rows in one loop, the rest by copy-binary.ts),
 * everything from the COPY's end handed back to pg byte for byte. copy-binary.test.ts runs the whole query against a real server.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CopyBinaryParser } from './copy-binary.js';
import { CopyBytes } from './copy-bytes.js';
import { CopyFrames } from './copy-frames.js';
import { copyRecordsModule } from './native-copy-records.js';
import { binaryCopyPieces } from '../../../test/support/binary-copy.js';

/** A protocol message: its type byte, an int32 length that counts itself, the body. */
function message(type: string, body: string | Buffer = ''): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(bytes.length + 4, 1);
  return Buffer.concat([header, bytes]);
}

/** A binary COPY's CopyData messages as a server sends them: the header, a message per row (null: NULL), the trailer. */
const copyData = (values: readonly (string | null)[]): Buffer[] => binaryCopyPieces(values).map((piece) => message('d', piece));

/** Reads the chunks until the COPY ends: the records read, and what pg is handed (null while the COPY goes on). */
function read(chunks: readonly Buffer[], parser: CopyBinaryParser | CopyBytes = new CopyBinaryParser()): { data: string; bytes: Buffer; handedBack: Buffer | null; after: Buffer[] } {
  const frames = new CopyFrames(parser);
  let handedBack: Buffer | null = null;
  const after: Buffer[] = [];
  for (const chunk of chunks) {
    if (handedBack !== null) after.push(chunk);
    else handedBack = frames.read(chunk);
  }
  const bytes = Buffer.concat(parser.take());
  return { data: bytes.toString('utf8'), bytes, handedBack, after };
}

const ROWS = ['{"a":1}', '', null, 'Смартфон 😀', 'x'.repeat(300), 'y'];
const RECORDS = ROWS.filter((row) => row !== null).join('');
const COPY_START = [message('C', 'SET\0'), message('H', Buffer.from([1, 0, 1, 0, 1]))];
const END = Buffer.concat([message('c'), message('C', 'COPY 5\0'), message('Z', 'I')]);

describe('COPY TO messages read off the socket', () => {
  // A notice and a parameter status between rows, as a server may send them.
  const [header, ...rows] = copyData(ROWS);
  const stream = Buffer.concat([...COPY_START, header, rows[0], message('N', 'SNOTICE\0Mhello\0\0'), rows[1], message('S', 'TimeZone\0UTC\0'), ...rows.slice(2), END]);

  it('gives the records, and hands pg everything from CopyDone on, however the stream is cut', () => {
    for (let i = 0; i <= stream.length; i++) {
      for (const j of [i, Math.min(stream.length, i + 1), Math.min(stream.length, i + 4), stream.length]) {
        const { data, handedBack, after } = read([stream.subarray(0, i), stream.subarray(i, j), stream.subarray(j)]);
        assert.equal(data, RECORDS, `cut at ${i} and ${j}`);
        assert.ok(handedBack !== null, `cut at ${i} and ${j}: the end was seen`);
        assert.deepEqual(Buffer.concat([handedBack, ...after]), END, `cut at ${i} and ${j}`);
      }
    }
  });

  const module = copyRecordsModule();
  it('keeps the CopyData messages whole for the C module (CopyBytes), framing and all, however the stream is cut', { skip: module === null && 'the module was not built' }, () => {
    const messages = Buffer.concat(copyData(ROWS));
    for (let i = 0; i <= stream.length; i++) {
      for (const j of [i, Math.min(stream.length, i + 1), Math.min(stream.length, i + 4), stream.length]) {
        const { bytes, handedBack, after } = read([stream.subarray(0, i), stream.subarray(i, j), stream.subarray(j)], new CopyBytes(module!.copyDataRun));
        assert.deepEqual(bytes, messages, `cut at ${i} and ${j}`);
        assert.deepEqual(Buffer.concat([handedBack ?? Buffer.alloc(0), ...after]), END, `cut at ${i} and ${j}`);
      }
    }
  });

  it('keeps its own copy of what it is given (CopyBytes): reads into one buffer, overwritten after each, lose nothing', { skip: module === null && 'the module was not built' }, () => {
    const messages = Buffer.concat(copyData(ROWS));
    const socketBuffer = Buffer.alloc(stream.length);
    for (const size of [1, 7, 64, stream.length]) {
      const parser = new CopyBytes(module!.copyDataRun);
      const frames = new CopyFrames(parser);
      for (let at = 0; at < stream.length; at += size) {
        const read = stream.subarray(at, at + size);
        read.copy(socketBuffer);
        const rest = frames.read(socketBuffer.subarray(0, read.length));
        socketBuffer.fill(0xee);
        if (rest !== null) break;
      }
      assert.deepEqual(Buffer.concat(parser.take()), messages, `reads of ${size} bytes`);
    }
  });

  it('gives its buffer back for a later page (CopyBytes.release)', { skip: module === null && 'the module was not built' }, () => {
    const first = new CopyBytes(module!.copyDataRun);
    read([stream], first);
    const used = first.take()[0].buffer;
    first.release();
    const later = new CopyBytes(module!.copyDataRun);
    const { bytes } = read([stream], later);
    assert.equal(later.take()[0].buffer, used, 'the same memory');
    assert.deepEqual(bytes, Buffer.concat(copyData(ROWS)));
    later.release();
  });

  it('hands pg an error from its first byte on, mid-COPY or before it', () => {
    const error = message('E', 'SERROR\0Mdivision by zero\0\0');
    for (const before of [[...COPY_START, ...copyData(['a']).slice(0, 2)], [message('C', 'SET\0')]]) {
      const whole = Buffer.concat([...before, error, message('Z', 'I')]);
      for (let i = 0; i <= whole.length; i++) {
        const { handedBack, after } = read([whole.subarray(0, i), whole.subarray(i)]);
        assert.deepEqual(Buffer.concat([handedBack ?? Buffer.alloc(0), ...after]), Buffer.concat([error, message('Z', 'I')]), `cut at ${i}`);
      }
    }
  });

  it('hands pg what is no COPY (rows, an empty query, COPY FROM) and reads nothing of it', () => {
    for (const type of ['T', 'I', 'G']) {
      const whole = Buffer.concat([message(type, 'body'), message('Z', 'I')]);
      const { data, handedBack } = read([whole]);
      assert.equal(data, '');
      assert.deepEqual(handedBack, whole);
    }
    // CopyData before CopyOutResponse, or a second CopyOutResponse, is not this COPY's either.
    const stray = Buffer.concat([message('d', 'x'), message('Z', 'I')]);
    assert.deepEqual(read([stray]).handedBack, stray);
    const twice = Buffer.concat([...COPY_START, COPY_START[1], message('Z', 'I')]);
    assert.deepEqual(read([twice]).handedBack, Buffer.concat([COPY_START[1], message('Z', 'I')]));
  });
});
