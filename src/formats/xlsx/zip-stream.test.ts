/*
 * zipStream read back by real zip readers — Info-ZIP `unzip`, Python's zipfile, JSZip (exceljs's
 * reader) — which check every entry's CRC-32 and sizes against the central directory, plus a
 * walk over the bytes for what the readers let pass (flags, data descriptors, ZIP64 fields).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import zlib from 'node:zlib';
import { zipStream, type ZipEntrySource, type ZipStreamOptions } from './zip-stream.js';

const OPTIONS: ZipStreamOptions = { mtime: new Date(2026, 2, 4, 5, 6, 8), compressionLevel: 1 };
const READER_ENV = { ...process.env, LC_ALL: 'C.UTF-8' };

// ---------------------------------------------------------------- inputs

const RANDOM = randomBytes(3 * 1024 * 1024 + 17);
const REPETITIVE = Buffer.from('<row r="1"><c r="A1" t="inlineStr"><is><t>Смартфон «Галактика»</t></is></c></row>'.repeat(40_000));
const BIG = Buffer.concat([RANDOM, REPETITIVE, RANDOM.subarray(0, 100_000)]);

/** `bytes` in chunks of uneven sizes (1 byte … 300 KB, a few empty ones), as Uint8Array and Buffer. */
async function* inChunks(bytes: Buffer): AsyncGenerator<Uint8Array> {
  const sizes = [1, 7, 0, 1000, 65_536, 300_000, 4096, 123_457];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    const chunk = bytes.subarray(at, at + size);
    yield i % 2 === 0 ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    at += size;
  }
}

interface Expected {
  path: string;
  bytes: Buffer;
}

const EXPECTED: readonly Expected[] = [
  { path: '[Content_Types].xml', bytes: Buffer.from('<?xml version="1.0"?><Types/>') },
  { path: 'empty.txt', bytes: Buffer.alloc(0) },
  { path: 'xl/worksheets/большой лист 📱.xml', bytes: BIG },
  { path: 'Ünïcödé/名前.txt', bytes: Buffer.from('naïve — 名前\n') },
  { path: 'one-byte', bytes: Buffer.from('x') },
];

const sources = (expected: readonly Expected[] = EXPECTED): ZipEntrySource[] =>
  expected.map(({ path, bytes }) => ({ path, content: () => inChunks(bytes) }));

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) {
    assert.ok(Buffer.isBuffer(chunk), 'zipStream yields Buffers');
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

function withFile<T>(bytes: Buffer, use: (path: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'zip-stream-'));
  try {
    const path = join(dir, 'archive.zip');
    writeFileSync(path, bytes);
    return use(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- readers

const found = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const UNZIP = found('unzip');
const PYTHON = ['python3', '/usr/bin/python3'].find((python) => spawnSync(python, ['-c', 'import zipfile']).status === 0) ?? null;

/** At least one command-line reader, or the test fails: a check that silently checks nothing is no check. */
function requireReaders(): void {
  assert.ok(UNZIP || PYTHON, 'no zip reader: install unzip or python3 to run these tests');
}

interface PythonEntry {
  name: string;
  size: number;
  compressed: number;
  crc: number;
  flags: number;
  version: number;
  method: number;
  date_time: number[];
  offset: number;
  sha256: string | null;
}

const PYTHON_READER = `
import sys, json, zipfile, hashlib
skip = set(json.loads(sys.argv[2]))
out = []
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        digest = None
        if i.filename not in skip:
            h = hashlib.sha256()
            with z.open(i) as f:  # raises BadZipFile on a CRC-32 that does not match
                while True:
                    b = f.read(1 << 20)
                    if not b:
                        break
                    h.update(b)
            digest = h.hexdigest()
        out.append(dict(name=i.filename, size=i.file_size, compressed=i.compress_size, crc=i.CRC, flags=i.flag_bits,
                        version=i.extract_version, method=i.compress_type, date_time=list(i.date_time),
                        offset=i.header_offset, sha256=digest))
print(json.dumps(out))
`;

/** Python's zipfile: every entry read through (CRC checked), except those named in `skip`. */
function readWithPython(path: string, skip: readonly string[] = []): PythonEntry[] {
  const run = spawnSync(PYTHON!, ['-c', PYTHON_READER, path, JSON.stringify(skip)], {
    encoding: 'utf8',
    env: READER_ENV,
    maxBuffer: 64 * 1024 * 1024,
  });
  assert.equal(run.status, 0, `python zipfile failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as PythonEntry[];
}

/** `unzip -t`: inflates every entry and checks its CRC-32. */
function testWithUnzip(path: string): void {
  const run = spawnSync('unzip', ['-t', path], { encoding: 'utf8', env: READER_ENV, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(run.status, 0, `unzip -t failed: ${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /No errors detected in compressed data/);
}

/** One entry's bytes through `unzip -p` (the name is a pattern to unzip: wildcards escaped). */
function extractWithUnzip(path: string, name: string): Buffer {
  const pattern = name.replace(/[[\]*?\\]/g, (c) => `\\${c}`);
  const run = spawnSync('unzip', ['-p', path, pattern], { env: READER_ENV, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(run.status, 0, `unzip -p ${name} failed: ${run.stderr.toString()}`);
  return run.stdout;
}

/** `unzip -Z1`: the names in the central directory. */
function namesWithUnzip(path: string): string[] {
  const run = spawnSync('unzip', ['-Z1', path], { encoding: 'utf8', env: READER_ENV, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(run.status, 0, `unzip -Z1 failed: ${run.stderr}`);
  return run.stdout.split('\n').filter((line) => line !== '');
}

interface JSZipFile {
  name: string;
  dir: boolean;
  async(type: 'nodebuffer'): Promise<Buffer>;
}
interface JSZipArchive {
  files: Record<string, JSZipFile>;
}
interface JSZipModule {
  loadAsync(data: Buffer, options: { checkCRC32: boolean }): Promise<JSZipArchive>;
}

/** JSZip, which exceljs reads workbooks with; null when it is not installed. */
async function jszip(): Promise<JSZipModule | null> {
  const name = 'jszip'; // a transitive dependency (exceljs): not imported statically
  try {
    const loaded = (await import(name)) as { default: JSZipModule };
    return loaded.default;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- the bytes, walked

interface CentralEntry {
  name: string;
  versionNeeded: number;
  flags: number;
  method: number;
  dosTime: number;
  dosDate: number;
  crc: number;
  compressedSize: number;
  size: number;
  offset: number;
  unixMtime: number | null;
  zip64: boolean;
}

interface Layout {
  entries: CentralEntry[];
  zip64End: boolean;
  centralDirectoryOffset: number;
}

type Read = (position: number, length: number) => Buffer;

const fromBuffer =
  (bytes: Buffer): Read =>
  (position, length) => {
    assert.ok(position >= 0 && position + length <= bytes.length, `read at ${position}+${length} is outside the archive`);
    return bytes.subarray(position, position + length);
  };

const u64 = (buffer: Buffer, at: number): number => Number(buffer.readBigUInt64LE(at));

/**
 * Walks an archive by its end records and central directory and checks each local header and
 * data descriptor against its central-directory record.
 */
function walk(read: Read, archiveLength: number): Layout {
  const eocd = read(archiveLength - 22, 22);
  assert.equal(eocd.readUInt32LE(0), 0x06054b50, 'end of central directory record last, no comment');
  let count = eocd.readUInt16LE(10);
  let cdSize = eocd.readUInt32LE(12);
  let cdOffset = eocd.readUInt32LE(16);
  const zip64End = count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff;
  if (zip64End) {
    const locator = read(archiveLength - 22 - 20, 20);
    assert.equal(locator.readUInt32LE(0), 0x07064b50, 'ZIP64 end of central directory locator');
    assert.equal(locator.readUInt32LE(16), 1, 'one disk');
    const recordOffset = u64(locator, 8);
    assert.equal(recordOffset, archiveLength - 22 - 20 - 56);
    const record = read(recordOffset, 56);
    assert.equal(record.readUInt32LE(0), 0x06064b50, 'ZIP64 end of central directory record');
    assert.equal(u64(record, 4), 44);
    assert.equal(record.readUInt16LE(14), 45);
    count = u64(record, 32);
    assert.equal(u64(record, 24), count);
    cdSize = u64(record, 40);
    cdOffset = u64(record, 48);
    assert.equal(cdOffset + cdSize, recordOffset, 'the ZIP64 record follows the central directory');
  } else {
    assert.equal(cdOffset + cdSize, archiveLength - 22, 'the end record follows the central directory');
  }

  const directory = read(cdOffset, cdSize);
  const entries: CentralEntry[] = [];
  let at = 0;
  let expectedOffset = 0;
  for (let i = 0; i < count; i++) {
    assert.equal(directory.readUInt32LE(at), 0x02014b50, `central directory record ${i}`);
    assert.equal(directory.readUInt16LE(at + 4), (3 << 8) | 63, 'made by Unix, APPNOTE 6.3');
    const nameLength = directory.readUInt16LE(at + 28);
    const extraLength = directory.readUInt16LE(at + 30);
    assert.equal(directory.readUInt16LE(at + 32), 0, 'no comment');
    assert.equal(directory.readUInt32LE(at + 38), (0o100664 << 16) >>> 0, 'a regular file, 0664');
    const entry: CentralEntry = {
      name: directory.toString('utf8', at + 46, at + 46 + nameLength),
      versionNeeded: directory.readUInt16LE(at + 6),
      flags: directory.readUInt16LE(at + 8),
      method: directory.readUInt16LE(at + 10),
      dosTime: directory.readUInt16LE(at + 12),
      dosDate: directory.readUInt16LE(at + 14),
      crc: directory.readUInt32LE(at + 16),
      compressedSize: directory.readUInt32LE(at + 20),
      size: directory.readUInt32LE(at + 24),
      offset: directory.readUInt32LE(at + 42),
      unixMtime: null,
      zip64: false,
    };
    const extra = directory.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength);
    for (let e = 0; e < extra.length; ) {
      const tag = extra.readUInt16LE(e);
      const length = extra.readUInt16LE(e + 2);
      if (tag === 0x5455) {
        assert.equal(length, 5);
        entry.unixMtime = extra.readInt32LE(e + 5);
      } else if (tag === 0x0001) {
        // All three 32-bit fields overflow together (as yazl wrote them), so all three are here.
        assert.equal(length, 24);
        assert.equal(entry.size, 0xffffffff);
        assert.equal(entry.compressedSize, 0xffffffff);
        assert.equal(entry.offset, 0xffffffff);
        entry.size = u64(extra, e + 4);
        entry.compressedSize = u64(extra, e + 12);
        entry.offset = u64(extra, e + 20);
        entry.zip64 = true;
      } else {
        assert.fail(`unexpected extra field 0x${tag.toString(16)}`);
      }
      e += 4 + length;
    }
    assert.equal(entry.versionNeeded, entry.zip64 ? 45 : 20);
    assert.equal(entry.zip64, entry.size > 0xfffffffe || entry.compressedSize > 0xfffffffe || entry.offset > 0xfffffffe);
    assert.equal(entry.flags, 0x0808, 'bit 3 (data descriptor) and bit 11 (UTF-8 name)');
    assert.equal(entry.offset, expectedOffset, 'entries back to back, in order');

    const local = read(entry.offset, 30 + nameLength);
    assert.equal(local.readUInt32LE(0), 0x04034b50, `local file header of ${entry.name}`);
    assert.equal(local.readUInt16LE(4), 20, 'version needed (the local header never knows about ZIP64 sizes)');
    assert.equal(local.readUInt16LE(6), entry.flags);
    assert.equal(local.readUInt16LE(8), entry.method);
    assert.equal(local.readUInt16LE(10), entry.dosTime);
    assert.equal(local.readUInt16LE(12), entry.dosDate);
    assert.deepEqual([local.readUInt32LE(14), local.readUInt32LE(18), local.readUInt32LE(22)], [0, 0, 0], 'CRC and sizes come later');
    assert.equal(local.readUInt16LE(26), nameLength);
    assert.equal(local.readUInt16LE(28), 0, 'no extra field in the local header');
    assert.equal(local.toString('utf8', 30), entry.name);

    const descriptorAt = entry.offset + 30 + nameLength + entry.compressedSize;
    const descriptor = read(descriptorAt, entry.zip64 ? 24 : 16);
    assert.equal(descriptor.readUInt32LE(0), 0x08074b50, `data descriptor of ${entry.name}, with its signature`);
    assert.equal(descriptor.readUInt32LE(4), entry.crc);
    if (entry.zip64) {
      assert.deepEqual([u64(descriptor, 8), u64(descriptor, 16)], [entry.compressedSize, entry.size]);
    } else {
      assert.deepEqual([descriptor.readUInt32LE(8), descriptor.readUInt32LE(12)], [entry.compressedSize, entry.size]);
    }
    expectedOffset = descriptorAt + descriptor.length;
    entries.push(entry);
    at += 46 + nameLength + extraLength;
  }
  assert.equal(at, cdSize, 'the central directory holds exactly its records');
  assert.equal(expectedOffset, cdOffset, 'the central directory follows the last entry');
  return { entries, zip64End, centralDirectoryOffset: cdOffset };
}

function dosDateTime(date: Date): { dosDate: number; dosTime: number } {
  return {
    dosDate: date.getDate() | ((date.getMonth() + 1) << 5) | ((date.getFullYear() - 1980) << 9),
    dosTime: (date.getSeconds() >> 1) | (date.getMinutes() << 5) | (date.getHours() << 11),
  };
}

// ---------------------------------------------------------------- tests

test('several entries (text, empty, several MB in uneven chunks, UTF-8 names) read back by unzip, zipfile and JSZip', async (t: TestContext) => {
  requireReaders();
  const bytes = await collect(zipStream(sources(), OPTIONS));
  assert.ok(bytes.length < BIG.length, 'the repetitive part deflated');

  withFile(bytes, (path) => {
    if (UNZIP) {
      testWithUnzip(path);
      assert.deepEqual(namesWithUnzip(path), EXPECTED.map((e) => e.path));
      for (const { path: name, bytes: content } of EXPECTED) {
        assert.equal(sha256(extractWithUnzip(path, name)), sha256(content), `unzip -p ${name}`);
      }
    } else {
      t.diagnostic('unzip is not installed: read with Python only');
    }
    if (PYTHON) {
      const read = readWithPython(path);
      assert.deepEqual(
        read.map((e) => [e.name, e.size, e.crc, e.sha256, e.method]),
        EXPECTED.map((e) => [e.path, e.bytes.length, zlib.crc32(e.bytes), sha256(e.bytes), 8]),
      );
    } else {
      t.diagnostic('python3 is not installed: read with unzip only');
    }
  });

  const JSZip = await jszip();
  if (JSZip === null) {
    t.diagnostic('jszip is not installed: not read with JSZip');
    return;
  }
  const archive = await JSZip.loadAsync(bytes, { checkCRC32: true });
  assert.deepEqual(Object.keys(archive.files), EXPECTED.map((e) => e.path));
  for (const { path, bytes: content } of EXPECTED) {
    assert.equal(sha256(await archive.files[path]!.async('nodebuffer')), sha256(content), `JSZip ${path}`);
  }
});

test('the layout: flags, data descriptors, central-directory CRC and sizes, DOS and Unix times', async () => {
  const bytes = await collect(zipStream(sources(), OPTIONS));
  const layout = walk(fromBuffer(bytes), bytes.length);
  assert.equal(layout.zip64End, false);
  const { dosDate, dosTime } = dosDateTime(OPTIONS.mtime);
  assert.deepEqual(
    layout.entries.map((e) => [e.name, e.method, e.crc, e.size, e.dosDate, e.dosTime, e.unixMtime]),
    EXPECTED.map((e) => [e.path, 8, zlib.crc32(e.bytes), e.bytes.length, dosDate, dosTime, Math.floor(OPTIONS.mtime.getTime() / 1000)]),
  );
  for (const entry of layout.entries) {
    const data = bytes.subarray(entry.offset + 30 + Buffer.byteLength(entry.name), entry.offset + 30 + Buffer.byteLength(entry.name) + entry.compressedSize);
    assert.equal(sha256(zlib.inflateRawSync(data)), sha256(EXPECTED.find((e) => e.path === entry.name)!.bytes), `inflate ${entry.name}`);
  }
  if (PYTHON) {
    withFile(bytes, (path) => {
      const mtime = OPTIONS.mtime;
      for (const entry of readWithPython(path)) {
        assert.deepEqual(entry.date_time, [mtime.getFullYear(), mtime.getMonth() + 1, mtime.getDate(), mtime.getHours(), mtime.getMinutes(), mtime.getSeconds()]);
        assert.equal(entry.flags & 0x0808, 0x0808);
        assert.equal(entry.version, 20);
      }
    });
  }
});

test('the same input gives the same bytes; another mtime gives other bytes', async () => {
  const first = await collect(zipStream(sources(), OPTIONS));
  const second = await collect(zipStream(sources(), OPTIONS));
  assert.equal(sha256(second), sha256(first));
  const later = await collect(zipStream(sources(), { ...OPTIONS, mtime: new Date(2026, 2, 4, 5, 6, 10) }));
  assert.equal(later.length, first.length);
  assert.notEqual(sha256(later), sha256(first));
  // Out of DOS range: clamped to 1980-01-01 00:00 local time; the Unix time keeps the truth.
  const old = walk(fromBuffer(await collect(zipStream(sources(), { ...OPTIONS, mtime: new Date(0) }))), first.length);
  assert.deepEqual([old.entries[0]!.dosDate, old.entries[0]!.dosTime], [(0 << 9) | (1 << 5) | 1, 0]);
  assert.equal(old.entries[0]!.unixMtime, 0);
});

test('the compression level comes from the options: 0 stores, 1 and 9 deflate', async () => {
  const text = [{ path: 'text.xml', bytes: Buffer.concat([REPETITIVE, Buffer.from(RANDOM.toString('hex').slice(0, 200_000))]) }];
  const sizes: number[] = [];
  for (const compressionLevel of [0, 1, 9]) {
    const bytes = await collect(zipStream(sources(text), { ...OPTIONS, compressionLevel }));
    const [entry] = walk(fromBuffer(bytes), bytes.length).entries;
    assert.equal(entry!.method, compressionLevel === 0 ? 0 : 8);
    assert.equal(entry!.crc, zlib.crc32(text[0]!.bytes));
    sizes.push(entry!.compressedSize);
    if (PYTHON) withFile(bytes, (path) => assert.equal(readWithPython(path)[0]!.sha256, sha256(text[0]!.bytes)));
  }
  assert.equal(sizes[0], text[0]!.bytes.length, 'stored as is');
  assert.ok(sizes[2]! < sizes[1]! && sizes[1]! < sizes[0]!, `level 9 smaller than level 1: ${sizes.join(' / ')}`);
  await assert.rejects(collect(zipStream(sources(text), { ...OPTIONS, compressionLevel: 10 })), RangeError);
});

test('a source that throws rejects the iteration, before or after its first chunk', async () => {
  for (const yieldFirst of [false, true]) {
    let laterOpened = false;
    const entries: ZipEntrySource[] = [
      { path: 'fine.txt', content: () => inChunks(BIG) },
      {
        path: 'broken.txt',
        content: async function* () {
          if (yieldFirst) yield RANDOM.subarray(0, 100_000);
          throw new Error('database went away');
        },
      },
      {
        path: 'later.txt',
        content: async function* () {
          laterOpened = true;
          yield Buffer.from('never');
        },
      },
    ];
    await assert.rejects(collect(zipStream(entries, OPTIONS)), /database went away/);
    assert.equal(laterOpened, false);
  }
});

test('a consumer that stops early ends the source being read: its finally has run when the loop is left', async () => {
  let pulled = 0;
  let closed = false;
  let laterOpened = false;
  const entries: ZipEntrySource[] = [
    { path: 'first.txt', content: () => inChunks(Buffer.from('hello')) },
    {
      path: 'endless.bin',
      content: async function* () {
        try {
          for (;;) {
            pulled += 1;
            yield RANDOM.subarray(0, 64 * 1024);
          }
        } finally {
          closed = true;
        }
      },
    },
    {
      path: 'later.txt',
      content: async function* () {
        laterOpened = true;
        yield Buffer.from('never');
      },
    },
  ];
  let received = 0;
  for await (const chunk of zipStream(entries, OPTIONS)) {
    received += chunk.length;
    if (received > 2 * 1024 * 1024) break;
  }
  assert.ok(pulled > 10, 'the endless source was being read');
  assert.equal(closed, true, "the source's finally ran before the loop was left");
  assert.equal(laterOpened, false);
});

test('backpressure: a consumer that does not ask for more holds back the source', async () => {
  let pulledBytes = 0;
  const chunk = RANDOM.subarray(0, 64 * 1024); // incompressible: output bytes ≈ input bytes
  const entries: ZipEntrySource[] = [
    {
      path: 'endless.bin',
      content: async function* () {
        for (;;) {
          pulledBytes += chunk.length;
          yield chunk;
        }
      },
    },
  ];
  const iterator = zipStream(entries, OPTIONS);
  let received = 0;
  for (let i = 0; i < 5; i++) received += (await iterator.next()).value!.length;
  await sleep(300); // deflate and the source have every chance to run ahead
  const ahead = pulledBytes - received;
  assert.ok(ahead < 1024 * 1024, `read ${ahead} bytes ahead of the consumer`);
  await iterator.return(undefined);
});

test('ZIP64: more than 65,535 entries', async () => {
  requireReaders();
  const count = 0x10000 + 2;
  const entries: ZipEntrySource[] = Array.from({ length: count }, (_, i) => ({
    path: `e/${i}`,
    content: async function* () {
      if (i % 1000 === 0) yield Buffer.from(`entry ${i}`);
    },
  }));
  const bytes = await collect(zipStream(entries, OPTIONS));
  const layout = walk(fromBuffer(bytes), bytes.length);
  assert.equal(layout.zip64End, true);
  assert.equal(layout.entries.length, count);
  const eocd = bytes.subarray(bytes.length - 22);
  assert.equal(eocd.readUInt16LE(10), 0xffff, 'the 16-bit count says: see the ZIP64 record');
  assert.equal(eocd.readUInt32LE(16), layout.centralDirectoryOffset, 'the fields that fit keep their value');
  withFile(bytes, (path) => {
    if (UNZIP) {
      testWithUnzip(path);
      assert.equal(namesWithUnzip(path).length, count);
      assert.equal(extractWithUnzip(path, 'e/65000').toString(), 'entry 65000');
    }
    if (PYTHON) {
      const read = readWithPython(path);
      assert.equal(read.length, count);
      assert.deepEqual(read[65000], { ...read[65000]!, name: 'e/65000', size: 11, crc: zlib.crc32('entry 65000') });
    }
  });
  // Not JSZip: it takes seconds over 65,538 entries, and no workbook has that many parts.
});

/** `size` zero bytes from one reused buffer. */
async function* zeros(size: number): AsyncGenerator<Uint8Array> {
  const block = Buffer.alloc(4 * 1024 * 1024);
  for (let left = size; left > 0; left -= block.length) yield block.subarray(0, Math.min(left, block.length));
}

const PAST_4_GIB = 2 ** 32 + 12_345;
const ZEROS_CRC = 0x1e83137d; // CRC-32 of PAST_4_GIB zero bytes (Python: zlib.crc32(bytes(2**32 + 12345)))

test('ZIP64: an entry of more than 4 GiB (zeros, deflated)', { timeout: 120_000 }, async () => {
  requireReaders();
  const entries: ZipEntrySource[] = [
    { path: 'before.txt', content: () => inChunks(Buffer.from('before')) },
    { path: 'huge.bin', content: () => zeros(PAST_4_GIB) },
    { path: 'after.txt', content: () => inChunks(Buffer.from('after')) },
  ];
  const bytes = await collect(zipStream(entries, OPTIONS)); // ~19 MB
  const layout = walk(fromBuffer(bytes), bytes.length);
  assert.deepEqual(
    layout.entries.map((e) => [e.name, e.zip64, e.size, e.crc]),
    [
      ['before.txt', false, 6, zlib.crc32('before')],
      ['huge.bin', true, PAST_4_GIB, ZEROS_CRC],
      ['after.txt', false, 5, zlib.crc32('after')],
    ],
  );
  withFile(bytes, (path) => {
    // `unzip -t` would take ~10 s over 4 GiB: it checks the small entries; Python reads all.
    if (UNZIP) {
      assert.equal(extractWithUnzip(path, 'after.txt').toString(), 'after');
      const listing = spawnSync('unzip', ['-lv', path], { encoding: 'utf8', env: READER_ENV });
      assert.match(listing.stdout, new RegExp(`^\\s*${PAST_4_GIB}\\s+Defl:\\S+\\s+${layout.entries[1]!.compressedSize}\\s.*${ZEROS_CRC.toString(16)}\\s+huge\\.bin$`, 'm'));
    }
    if (PYTHON) {
      const read = readWithPython(path);
      assert.deepEqual(
        read.map((e) => [e.name, e.size, e.crc, e.version]),
        [
          ['before.txt', 6, zlib.crc32('before'), 20],
          ['huge.bin', PAST_4_GIB, ZEROS_CRC, 45],
          ['after.txt', 5, zlib.crc32('after'), 20],
        ],
      );
      assert.equal(read[2]!.sha256, sha256(Buffer.from('after')));
    }
  });
});

test('ZIP64: entries and central directory past 4 GiB (stored, into a sparse file)', { timeout: 120_000 }, async () => {
  requireReaders();
  const entries: ZipEntrySource[] = [
    { path: 'before.txt', content: () => inChunks(Buffer.from('before')) },
    { path: 'huge.bin', content: () => zeros(PAST_4_GIB) },
    { path: 'after.txt', content: () => inChunks(Buffer.from('after')) },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'zip-stream-'));
  try {
    // 4 GiB of archive on disk only where it is not zeros.
    const path = join(dir, 'archive.zip');
    const fd = openSync(path, 'w+');
    const empty = Buffer.alloc(4 * 1024 * 1024);
    let length = 0;
    try {
      for await (const chunk of zipStream(entries, { ...OPTIONS, compressionLevel: 0 })) {
        if (chunk.length > empty.length || !chunk.equals(empty.subarray(0, chunk.length))) writeSync(fd, chunk, 0, chunk.length, length);
        length += chunk.length;
      }
      ftruncateSync(fd, length);
      const read: Read = (position, size) => {
        const buffer = Buffer.alloc(size);
        assert.equal(readSync(fd, buffer, 0, size, position), size);
        return buffer;
      };
      const layout = walk(read, length);
      assert.equal(layout.zip64End, true);
      assert.ok(layout.centralDirectoryOffset > 0xffffffff);
      assert.deepEqual(
        layout.entries.map((e) => [e.name, e.zip64, e.method, e.size, e.compressedSize, e.crc]),
        [
          ['before.txt', false, 0, 6, 6, zlib.crc32('before')],
          ['huge.bin', true, 0, PAST_4_GIB, PAST_4_GIB, ZEROS_CRC],
          ['after.txt', true, 0, 5, 5, zlib.crc32('after')], // its local header is past 4 GiB
        ],
      );
      const eocd = read(length - 22, 22);
      assert.equal(eocd.readUInt16LE(10), 3, 'the count fits');
      assert.equal(eocd.readUInt32LE(16), 0xffffffff, 'the offset does not');
    } finally {
      closeSync(fd);
    }
    if (UNZIP) {
      assert.equal(extractWithUnzip(path, 'after.txt').toString(), 'after');
      assert.equal(extractWithUnzip(path, 'before.txt').toString(), 'before');
    }
    if (PYTHON) {
      const read = readWithPython(path, ['huge.bin']);
      assert.deepEqual(
        read.map((e) => [e.name, e.size, e.crc, e.offset > 0xffffffff, e.sha256]),
        [
          ['before.txt', 6, zlib.crc32('before'), false, sha256(Buffer.from('before'))],
          ['huge.bin', PAST_4_GIB, ZEROS_CRC, false, null],
          ['after.txt', 5, zlib.crc32('after'), true, sha256(Buffer.from('after'))],
        ],
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('entry paths that a zip must not hold are refused before any byte', async () => {
  for (const path of ['', '/etc/passwd', 'C:/x', '../up', 'a/../../b', 'dir/']) {
    const iterator = zipStream([{ path, content: () => inChunks(Buffer.from('x')) }], OPTIONS);
    await assert.rejects(iterator.next(), /invalid entry path/, JSON.stringify(path));
  }
  const bytes = await collect(zipStream([{ path: 'win\\style.txt', content: () => inChunks(Buffer.from('x')) }], OPTIONS));
  assert.equal(walk(fromBuffer(bytes), bytes.length).entries[0]!.name, 'win/style.txt');
});
