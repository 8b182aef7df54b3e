/*
 * The byte layout of a zip archive's records (APPNOTE.TXT 6.3), for zip-stream.ts: local file
 * headers, data descriptors, the central directory and the (ZIP64) end records.
 */

const LOCAL_FILE_HEADER_SIGNATURE = 0x04034b50;
const DATA_DESCRIPTOR_SIGNATURE = 0x08074b50;
const CENTRAL_FILE_HEADER_SIGNATURE = 0x02014b50;
const ZIP64_EOCD_RECORD_SIGNATURE = 0x06064b50;
const ZIP64_EOCD_LOCATOR_SIGNATURE = 0x07064b50;
const EOCD_RECORD_SIGNATURE = 0x06054b50;

const LOCAL_FILE_HEADER_SIZE = 30;
const DATA_DESCRIPTOR_SIZE = 16;
const ZIP64_DATA_DESCRIPTOR_SIZE = 24;
const CENTRAL_FILE_HEADER_SIZE = 46;
const UT_EXTRA_FIELD_SIZE = 9;
const ZIP64_EXTRA_FIELD_SIZE = 28;
const ZIP64_EOCD_RECORD_SIZE = 56;
const ZIP64_EOCD_LOCATOR_SIZE = 20;
const EOCD_RECORD_SIZE = 22;

const VERSION_NEEDED = 20; // deflate; also what bit 11 (UTF-8 names) asks of a reader
const VERSION_NEEDED_ZIP64 = 45;
const VERSION_MADE_BY = (3 << 8) | 63; // Unix, APPNOTE 6.3
const FLAGS = (1 << 3) | (1 << 11); // data descriptor, UTF-8 name
export const METHOD_STORED = 0;
export const METHOD_DEFLATED = 8;
const EXTERNAL_ATTRIBUTES = (0o100664 << 16) >>> 0; // regular file, rw-rw-r--

/** Past this, a 32-bit field holds 0xFFFFFFFF and the value moves to a ZIP64 field (yazl's bound). */
const MAX_32 = 0xfffffffe;
const MAX_ENTRIES_16 = 0xfffe;

export interface WrittenEntry {
  name: Buffer;
  method: number;
  /** Offset of the local file header. */
  offset: number;
  crc: number;
  size: number;
  compressedSize: number;
}

export interface Timestamps {
  dosTime: number;
  dosDate: number;
  unixSeconds: number;
}

export function entryName(path: string): Buffer {
  const name = path.replace(/\\/g, '/');
  if (name === '' || name.endsWith('/') || /^([a-zA-Z]:|\/)/.test(name) || name.split('/').includes('..')) {
    throw new Error(`zip: invalid entry path ${JSON.stringify(path)}`);
  }
  const bytes = Buffer.from(name, 'utf8');
  if (bytes.length > 0xffff) throw new Error(`zip: entry path longer than 65535 UTF-8 bytes: ${name.slice(0, 80)}…`);
  return bytes;
}

// DOS date and time are local time, as yazl (and zip readers) take them; clamped to 1980…2107.
const MIN_DOS_DATE = new Date(1980, 0, 1);
const MAX_DOS_DATE = new Date(2107, 11, 31, 23, 59, 58);

export function timestamps(mtime: Date): Timestamps {
  if (Number.isNaN(mtime.getTime())) throw new RangeError('zip: mtime is an invalid Date');
  const dos = mtime < MIN_DOS_DATE ? MIN_DOS_DATE : mtime > MAX_DOS_DATE ? MAX_DOS_DATE : mtime;
  const unixSeconds = Math.floor(mtime.getTime() / 1000);
  return {
    dosDate: (dos.getDate() & 0x1f) | (((dos.getMonth() + 1) & 0xf) << 5) | (((dos.getFullYear() - 1980) & 0x7f) << 9),
    dosTime: Math.floor(dos.getSeconds() / 2) | ((dos.getMinutes() & 0x3f) << 5) | ((dos.getHours() & 0x1f) << 11),
    unixSeconds: Math.min(0x7fffffff, Math.max(-0x80000000, unixSeconds)),
  };
}

const needsZip64 = (entry: WrittenEntry): boolean =>
  entry.size > MAX_32 || entry.compressedSize > MAX_32 || entry.offset > MAX_32;

function writeUInt64LE(buffer: Buffer, value: number, at: number): void {
  buffer.writeBigUInt64LE(BigInt(value), at);
}

export function localFileHeader(entry: WrittenEntry, stamps: Timestamps): Buffer {
  const header = Buffer.alloc(LOCAL_FILE_HEADER_SIZE + entry.name.length);
  header.writeUInt32LE(LOCAL_FILE_HEADER_SIGNATURE, 0);
  header.writeUInt16LE(VERSION_NEEDED, 4);
  header.writeUInt16LE(FLAGS, 6);
  header.writeUInt16LE(entry.method, 8);
  header.writeUInt16LE(stamps.dosTime, 10);
  header.writeUInt16LE(stamps.dosDate, 12);
  // 14: CRC-32, 18: compressed size, 22: size — zero, they follow in the data descriptor.
  header.writeUInt16LE(entry.name.length, 26);
  // 28: extra field length 0
  entry.name.copy(header, LOCAL_FILE_HEADER_SIZE);
  return header;
}

export function dataDescriptor(entry: WrittenEntry): Buffer {
  const zip64 = needsZip64(entry);
  const descriptor = Buffer.alloc(zip64 ? ZIP64_DATA_DESCRIPTOR_SIZE : DATA_DESCRIPTOR_SIZE);
  descriptor.writeUInt32LE(DATA_DESCRIPTOR_SIGNATURE, 0);
  descriptor.writeUInt32LE(entry.crc, 4);
  if (zip64) {
    writeUInt64LE(descriptor, entry.compressedSize, 8);
    writeUInt64LE(descriptor, entry.size, 16);
  } else {
    descriptor.writeUInt32LE(entry.compressedSize, 8);
    descriptor.writeUInt32LE(entry.size, 12);
  }
  return descriptor;
}

/** The central directory, then the (ZIP64 and) end-of-central-directory records. */
export function centralDirectory(entries: readonly WrittenEntry[], start: number, stamps: Timestamps): Buffer {
  let size = 0;
  for (const entry of entries) {
    size += CENTRAL_FILE_HEADER_SIZE + entry.name.length + UT_EXTRA_FIELD_SIZE + (needsZip64(entry) ? ZIP64_EXTRA_FIELD_SIZE : 0);
  }
  const manyEntries = entries.length > MAX_ENTRIES_16;
  const bigDirectory = size > MAX_32;
  const farDirectory = start > MAX_32;
  const zip64End = manyEntries || bigDirectory || farDirectory;
  const endSize = (zip64End ? ZIP64_EOCD_RECORD_SIZE + ZIP64_EOCD_LOCATOR_SIZE : 0) + EOCD_RECORD_SIZE;
  const out = Buffer.alloc(size + endSize);

  let at = 0;
  for (const entry of entries) {
    const zip64 = needsZip64(entry);
    out.writeUInt32LE(CENTRAL_FILE_HEADER_SIGNATURE, at);
    out.writeUInt16LE(VERSION_MADE_BY, at + 4);
    out.writeUInt16LE(zip64 ? VERSION_NEEDED_ZIP64 : VERSION_NEEDED, at + 6);
    out.writeUInt16LE(FLAGS, at + 8);
    out.writeUInt16LE(entry.method, at + 10);
    out.writeUInt16LE(stamps.dosTime, at + 12);
    out.writeUInt16LE(stamps.dosDate, at + 14);
    out.writeUInt32LE(entry.crc, at + 16);
    out.writeUInt32LE(zip64 ? 0xffffffff : entry.compressedSize, at + 20);
    out.writeUInt32LE(zip64 ? 0xffffffff : entry.size, at + 24);
    out.writeUInt16LE(entry.name.length, at + 28);
    out.writeUInt16LE(UT_EXTRA_FIELD_SIZE + (zip64 ? ZIP64_EXTRA_FIELD_SIZE : 0), at + 30);
    // 32: comment length, 34: disk number start, 36: internal attributes — all 0
    out.writeUInt32LE(EXTERNAL_ATTRIBUTES, at + 38);
    out.writeUInt32LE(zip64 ? 0xffffffff : entry.offset, at + 42);
    at += CENTRAL_FILE_HEADER_SIZE;
    at += entry.name.copy(out, at);
    // Info-ZIP universal timestamp: flags mtime|atime (as Info-ZIP writes it), mtime in Unix seconds.
    out.writeUInt16LE(0x5455, at);
    out.writeUInt16LE(UT_EXTRA_FIELD_SIZE - 4, at + 2);
    out.writeUInt8(0b11, at + 4);
    out.writeInt32LE(stamps.unixSeconds, at + 5);
    at += UT_EXTRA_FIELD_SIZE;
    if (zip64) {
      // ZIP64 extended information: the three fields set to 0xFFFFFFFF above, in APPNOTE order.
      out.writeUInt16LE(0x0001, at);
      out.writeUInt16LE(ZIP64_EXTRA_FIELD_SIZE - 4, at + 2);
      writeUInt64LE(out, entry.size, at + 4);
      writeUInt64LE(out, entry.compressedSize, at + 12);
      writeUInt64LE(out, entry.offset, at + 20);
      at += ZIP64_EXTRA_FIELD_SIZE;
    }
  }

  if (zip64End) {
    const recordOffset = start + size;
    out.writeUInt32LE(ZIP64_EOCD_RECORD_SIGNATURE, at);
    writeUInt64LE(out, ZIP64_EOCD_RECORD_SIZE - 12, at + 4);
    out.writeUInt16LE(VERSION_MADE_BY, at + 12);
    out.writeUInt16LE(VERSION_NEEDED_ZIP64, at + 14);
    // 16: this disk, 20: disk with the central directory — 0
    writeUInt64LE(out, entries.length, at + 24);
    writeUInt64LE(out, entries.length, at + 32);
    writeUInt64LE(out, size, at + 40);
    writeUInt64LE(out, start, at + 48);
    at += ZIP64_EOCD_RECORD_SIZE;
    out.writeUInt32LE(ZIP64_EOCD_LOCATOR_SIGNATURE, at);
    // 4: disk with the ZIP64 end record — 0
    writeUInt64LE(out, recordOffset, at + 8);
    out.writeUInt32LE(1, at + 16); // total number of disks
    at += ZIP64_EOCD_LOCATOR_SIZE;
  }

  out.writeUInt32LE(EOCD_RECORD_SIGNATURE, at);
  // 4: this disk, 6: disk with the central directory — 0
  // Only a field that overflows holds its sentinel (as yazl); its true value is in the ZIP64 record.
  out.writeUInt16LE(manyEntries ? 0xffff : entries.length, at + 8);
  out.writeUInt16LE(manyEntries ? 0xffff : entries.length, at + 10);
  out.writeUInt32LE(bigDirectory ? 0xffffffff : size, at + 12);
  out.writeUInt32LE(farDirectory ? 0xffffffff : start, at + 16);
  // 20: comment length 0
  return out;
}
