import iconv from 'iconv-lite';
import type { PriceItem } from '../model/price-item.js';
import type { TabularOptions } from '../model/profile.js';

/** A text format's shape (STYLE §3): a header, one string per item (or per changes entry), a footer. */
export interface TextLayout<T = PriceItem> {
  header: string;
  /** `index` counts items across batches, from 0 (JSON needs it to place its commas). */
  row(item: T, index: number): string;
  /** Read after the last row (a changes layout closes what its rows left open). */
  footer: string;
}

/** How the text becomes bytes. Only csv/tsv profiles choose; json, xml and yml are always UTF-8 without BOM. */
export type TextEncoding = Pick<TabularOptions, 'encoding' | 'bom'>;

export const UTF8_NO_BOM: TextEncoding = Object.freeze({ encoding: 'utf-8', bom: false });

/**
 * Rows are gathered into chunks of about this many bytes: one chunk per row would drown the
 * response in tiny writes, one chunk per file would hold the whole list in memory.
 */
export const CHUNK_BYTES = 64 * 1024;

/**
 * No chunk is larger than this, except one that holds a single oversized row (a 50 000
 * character description): text is moved into the chunk buffer in slices, and a slice that
 * might overflow the buffer flushes it first. The margin holds a slice of ordinary rows at
 * the worst 3 bytes per UTF-16 unit, so early flushes stay rare; the buffer is allocated
 * once per download, so it is kept small.
 */
export const MAX_CHUNK_BYTES = CHUNK_BYTES + 32 * 1024;

/**
 * Rows are first joined as a string of about this many UTF-16 units, then encoded into the
 * chunk buffer. Encoding a whole 64 KiB rope at once makes V8 flatten thousands of small
 * strings out of cache; encoding each row alone pays a native call per row. Slices of 4 Ki
 * units measured fastest on the CSV benchmark (bench/formats-csv.ts), the service's hot path.
 */
const SLICE_UNITS = 4 * 1024;

const UTF8_BOM = '\uFEFF';

/** How a slice of text becomes bytes. */
interface Encoder {
  /** The most bytes one UTF-16 unit can take. */
  maxBytesPerUnit: number;
  /** Encodes into `target` at `offset`, returns the bytes written; the caller made room. */
  writeInto(text: string, target: Buffer, offset: number): number;
  encode(text: string): Buffer;
}

const UTF8: Encoder = {
  maxBytesPerUnit: 3,
  writeInto: (text, target, offset) => target.write(text, offset, 'utf8'),
  encode: (text) => Buffer.from(text, 'utf8'),
};

// A surrogate pair (an emoji) is one character but two UTF-16 units, and iconv-lite would
// print each unit as its own `?`; CONTRACT §6 says one character becomes one `?`.
const SURROGATES = /[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]/g;

const WINDOWS_1251: Encoder = {
  maxBytesPerUnit: 1,
  writeInto: (text, target, offset) => WINDOWS_1251.encode(text).copy(target, offset),
  // iconv-lite writes `?` for any other character windows-1251 cannot hold.
  encode: (text) => iconv.encode(text.replace(SURROGATES, '?'), 'windows-1251'),
};

/** Gathers texts into chunks; `add` returns the chunks it completed, usually none (null). */
function chunker(encoder: Encoder): { add(text: string): Uint8Array[] | null; end(): Uint8Array[] } {
  const buffer = Buffer.allocUnsafeSlow(MAX_CHUNK_BYTES);
  let used = 0;
  let pending = '';
  const take = (): Uint8Array => {
    const chunk = Buffer.allocUnsafe(used);
    buffer.copy(chunk, 0, 0, used);
    used = 0;
    return chunk;
  };
  const settle = (): Uint8Array[] | null => {
    let done: Uint8Array[] | null = null;
    const worstCase = pending.length * encoder.maxBytesPerUnit;
    if (used + worstCase > MAX_CHUNK_BYTES) {
      if (used > 0) done = [take()];
      if (worstCase > MAX_CHUNK_BYTES) {
        (done ??= []).push(encoder.encode(pending));
        pending = '';
        return done;
      }
    }
    used += encoder.writeInto(pending, buffer, used);
    pending = '';
    if (used >= CHUNK_BYTES) (done ??= []).push(take());
    return done;
  };
  return {
    add(text) {
      pending += text;
      return pending.length >= SLICE_UNITS ? settle() : null;
    },
    end() {
      const done = settle() ?? [];
      if (used > 0) done.push(take());
      return done;
    },
  };
}

/** Renders a layout over the batches as a byte stream in chunks of about {@link CHUNK_BYTES}. */
export async function* renderText<T = PriceItem>(
  batches: AsyncIterable<readonly T[]>,
  layout: TextLayout<T>,
  encoding: TextEncoding,
): AsyncGenerator<Uint8Array> {
  const unicode = encoding.encoding === 'utf-8';
  const chunks = chunker(unicode ? UTF8 : WINDOWS_1251);
  // A byte order mark only means something for a Unicode encoding: for windows-1251 the
  // option is ignored rather than writing bytes that 1C would show as `п»ї`.
  let done = chunks.add(unicode && encoding.bom ? UTF8_BOM + layout.header : layout.header);
  if (done !== null) yield* done;
  let index = 0;
  for await (const batch of batches) {
    for (const item of batch) {
      done = chunks.add(layout.row(item, index++));
      if (done !== null) yield* done;
    }
  }
  chunks.add(layout.footer);
  yield* chunks.end();
}

/** What a constant column's `get` is given when a writer describes its row for a store to build: it reads nothing. */
export const NO_ITEM = Object.freeze({}) as PriceItem;

/**
 * The head, the records a store built (model/record-spec.ts), the footer: the same bytes as
 * renderText over a layout whose rows are those records. UTF-8 only: a store builds no other.
 */
export async function* renderBuiltRecords(head: string, records: AsyncIterable<Uint8Array>, footer = ''): AsyncGenerator<Uint8Array> {
  if (head !== '') yield Buffer.from(head, 'utf8');
  yield* records;
  if (footer !== '') yield Buffer.from(footer, 'utf8');
}
