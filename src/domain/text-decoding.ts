import { isUtf8 } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';
import iconv from 'iconv-lite';
import { AppError } from '../errors/app-error.js';

/** The encodings a publication may come in; anything but UTF-8 only when the publisher says so. */
export const SOURCE_ENCODINGS = ['utf-8', 'windows-1251'] as const;
export type SourceEncoding = (typeof SOURCE_ENCODINGS)[number];

/** `utf8`, `UTF-8`, `cp1251`, `windows-1251` → the canonical name; null for anything else. */
export function sourceEncodingOf(name: string): SourceEncoding | null {
  const lower = name.trim().toLowerCase();
  if (lower === 'utf-8' || lower === 'utf8') return 'utf-8';
  if (lower === 'windows-1251' || lower === 'cp1251' || lower === 'win1251') return 'windows-1251';
  return null;
}

/**
 * Whether `bytesBefore` bytes and then `text` (from `start` to `end`) in UTF-8 are more than
 * `limit` (MAX_LINE_BYTES). A UTF-16 unit is at most 3 bytes of UTF-8, so a text too short to
 * pass is neither counted nor cut out: the readers check every record, and most are far below
 * the limit.
 */
export function overUtf8Limit(bytesBefore: number, text: string, limit: number, start = 0, end = text.length): boolean {
  return bytesBefore + (end - start) * 3 > limit && bytesBefore + Buffer.byteLength(text.slice(start, end)) > limit;
}

/**
 * A publication's bytes as UTF-8. UTF-8 input is checked, not converted: valid chunks pass
 * through untouched (a native check per chunk), and the first invalid byte stops the
 * publication with its position; a file in another encoding would otherwise be published as
 * U+FFFD garbage over a good list. windows-1251 input, when asked for, is converted.
 */
export function decodedAsUtf8(encoding: SourceEncoding): Transform {
  return encoding === 'utf-8' ? new Utf8Check() : windows1251ToUtf8();
}

class Utf8Check extends Transform {
  /** The bytes of a character cut by the chunk boundary, kept for the next chunk. */
  private carry: Buffer = Buffer.alloc(0);
  private bytesPassed = 0;
  private linesPassed = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    const complete = completeCharactersLength(data);
    const head = data.subarray(0, complete);
    this.carry = Buffer.from(data.subarray(complete));
    if (!isUtf8(head)) return done(this.invalidAt(head, firstInvalidUtf8(head)));
    this.bytesPassed += head.length;
    this.linesPassed += countLineFeeds(head, head.length);
    done(null, head);
  }

  override _flush(done: TransformCallback): void {
    done(this.carry.length > 0 ? this.invalidAt(this.carry, 0) : null);
  }

  private invalidAt(data: Buffer, index: number): AppError {
    const line = this.linesPassed + countLineFeeds(data, index) + 1;
    return new AppError(
      'invalid_publication',
      `line ${line}: the file is not valid UTF-8 (byte ${this.bytesPassed + index + 1}); send it in UTF-8, or name its encoding (windows-1251)`,
    );
  }
}

/** The length of `data` up to the last whole character: a lead byte near the end whose sequence runs past it is held back. */
function completeCharactersLength(data: Buffer): number {
  for (let i = data.length - 1; i >= Math.max(0, data.length - 3); i--) {
    const byte = data[i];
    if (byte < 0x80) return data.length;
    if (byte >= 0xc0) {
      const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return i + size > data.length ? i : data.length;
    }
  }
  return data.length;
}

/** The index of the first byte that starts no valid UTF-8 character (only called once a check failed). */
export function firstInvalidUtf8(data: Buffer): number {
  for (let i = 0; i < data.length;) {
    const byte = data[i];
    const size = byte < 0x80 ? 1 : byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
    if (size === 0 || i + size > data.length || !isUtf8(data.subarray(i, i + size))) return i;
    i += size;
  }
  return data.length;
}

function countLineFeeds(data: Buffer, end: number): number {
  let count = 0;
  for (let at = data.indexOf(10); at !== -1 && at < end; at = data.indexOf(10, at + 1)) count++;
  return count;
}

function windows1251ToUtf8(): Transform {
  const decoder = iconv.getDecoder('win1251');
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, Buffer.from(decoder.write(chunk), 'utf8'));
    },
    flush(done) {
      const rest = decoder.end() ?? '';
      done(null, rest === '' ? undefined : Buffer.from(rest, 'utf8'));
    },
  });
}
