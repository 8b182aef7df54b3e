import { pipeline, type Duplex, type Readable } from 'node:stream';
import { DEFAULT_MAX_LINE_BYTES } from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import { CsvRecordSplitter, CsvRecordTooLong, CsvSyntaxError, type CsvRecord } from './csv-records.js';
import { itemValue, JsonItemSplitter, type JsonItem } from './json-items.js';
import { decodedAsUtf8, type SourceEncoding } from './text-decoding.js';
import type { CsvRecordFramer, JsonItemFramer } from '../store/types.js';

/**
 * Connects the stages so that an error or an early close anywhere (an upload cut off half-way)
 * reaches the reader of the last stage, which then throws instead of waiting forever.
 */
function chain(input: Readable, ...stages: Duplex[]): Duplex {
  return pipeline([input, ...stages] as unknown as [Readable, Duplex], () => undefined) as unknown as Duplex;
}

export type SourceFormat = 'json' | 'ndjson' | 'csv';

/** One row of a publication, before validation, with where it stands in the file. */
export interface SourceRow {
  /** `items[3]` (JSON, 0-based) or `line 12` (NDJSON, CSV: 1-based). */
  position: string;
  raw: unknown;
  /** CSV rows: every value is text. */
  text: boolean;
}

/** `.ndjson`/`.jsonl` → ndjson, `.csv` → csv, anything else json; or from a Content-Type. */
export function sourceFormatOf(nameOrType: string): SourceFormat {
  const lower = nameOrType.toLowerCase();
  if (/\.(ndjson|jsonl)$/.test(lower) || lower.includes('ndjson') || lower.includes('jsonl')) return 'ndjson';
  if (lower.endsWith('.csv') || lower.includes('text/csv')) return 'csv';
  return 'json';
}

/**
 * Items of a JSON or NDJSON publication as their texts, not yet parsed (readSource's `raw`): a
 * store's native reader takes them from the bytes (publishing.ts), and `row` parses any it leaves.
 * `bounds` holds [start, end) pairs in `bytes`, one per item.
 */
export class RawItems {
  constructor(
    readonly bytes: Buffer,
    readonly bounds: Int32Array,
    /** Per item, its line (NDJSON, CSV), or null: the items are `items[first + k]` (JSON). */
    protected readonly lines: Int32Array | null,
    private readonly first: number,
    /** CSV records (CsvRecords): the header's names; null for JSON texts. */
    readonly columns: readonly string[] | null = null,
  ) {
    this.positions = new ItemPositions(bounds.length / 2, lines, first);
  }

  /** Where the items stood in the file, without their bytes (what a batch keeps of its rows' items). */
  readonly positions: ItemPositions;

  get count(): number {
    return this.positions.count;
  }

  position(k: number): string {
    return this.positions.at(k);
  }

  /** Item `k` as readSource's rows give it: parsed by JSON.parse; an NDJSON line that is not JSON is an InvalidJson row, a JSON item the file's refusal. */
  row(k: number): SourceRow {
    const [start, end] = [this.bounds[2 * k], this.bounds[2 * k + 1]];
    if (this.lines === null) return { position: this.position(k), raw: itemValue({ index: this.first + k, source: this.bytes, start, end }), text: false };
    let raw: unknown;
    try {
      raw = JSON.parse(this.bytes.toString('utf8', start, end));
    } catch (error) {
      raw = new InvalidJson((error as Error).message);
    }
    return { position: this.position(k), raw, text: false };
  }
}

/** Where a group's items stood in the file: its lines (NDJSON, CSV) or its first item's index (JSON). */
export class ItemPositions {
  constructor(
    readonly count: number,
    private readonly lines: Int32Array | null,
    private readonly first: number,
  ) {}

  at(k: number): string {
    return this.lines === null ? `items[${this.first + k}]` : `line ${this.lines[k]}`;
  }
}

/**
 * Records of a CSV publication as their bytes, not yet split into fields (readSource's `raw`,
 * with the store's framer): the store's reader takes them with the header's names, and `row`
 * reads any it leaves as csv-records.ts reads a record.
 */
export class CsvRecords extends RawItems {
  constructor(bytes: Buffer, bounds: Int32Array, lines: Int32Array, columns: readonly string[]) {
    super(bytes, bounds, lines, 0, columns);
  }

  override row(k: number): SourceRow {
    const fields = CsvRecordSplitter.fieldsOf(this.bytes.subarray(this.bounds[2 * k], this.bounds[2 * k + 1]));
    return csvRow(this.columns!, fields, this.lines![k]);
  }
}

/** How a publication is read. */
export interface SourceOptions {
  /** What the bytes are in; 'utf-8' (the default) is checked, and invalid bytes refuse the file. */
  encoding?: SourceEncoding;
  /** The longest NDJSON line, CSV record or JSON item, in bytes (MAX_LINE_BYTES): a longer one refuses the file instead of filling memory. */
  maxLineBytes?: number;
  /** JSON and NDJSON items as RawItems, their texts unparsed (publishing.ts reads them); CSV records as CsvRecords where a framer is given. */
  raw?: boolean;
  /** The store's native framer of a JSON array's items (Database.jsonItemFramer); without it the splitter scans every item. */
  frameJsonItems?: JsonItemFramer | null;
  /** The store's native framer of CSV records (Database.csvRecordFramer), used with `raw`; without it csv-records.ts reads every record. */
  frameCsvRecords?: CsvRecordFramer | null;
}

/**
 * Reads a publication as a stream of rows; the file is never held whole. Whatever goes wrong
 * while reading (bad bytes, a line over the limit, a parser's own failure) comes out as one
 * `invalid_publication` refusal, never as an unexpected error.
 */
export function readSource(input: Readable, format: SourceFormat, options?: SourceOptions & { raw?: false }): AsyncIterable<SourceRow>;
export function readSource(input: Readable, format: SourceFormat, options: SourceOptions): AsyncIterable<SourceRow | RawItems>;
export function readSource(input: Readable, format: SourceFormat, options: SourceOptions = {}): AsyncIterable<SourceRow | RawItems> {
  const text = chain(input, decodedAsUtf8(options.encoding ?? 'utf-8'));
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (format === 'csv') {
    const framer = options.raw ? (options.frameCsvRecords ?? null) : null;
    return refusingOnFailure<SourceRow | RawItems>(refusingCsv(framer === null ? readCsv(text, maxLineBytes) : readCsvFramed(text, maxLineBytes, framer), maxLineBytes));
  }
  const items = format === 'ndjson' ? readNdjson(text, maxLineBytes) : readJson(text, maxLineBytes, options.frameJsonItems ?? null);
  return options.raw ? refusingOnFailure<SourceRow | RawItems>(items) : refusingOnFailure<SourceRow>(parsed(items));
}

/** Every item parsed, as a row. */
async function* parsed(groups: AsyncIterable<RawItems>): AsyncIterable<SourceRow> {
  for await (const group of groups) for (let k = 0; k < group.count; k++) yield group.row(k);
}

async function* refusingOnFailure<T>(rows: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* rows;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('invalid_publication', `the file could not be read: ${(error as Error).message}`);
  }
}

const tooLong = (line: number, maxLineBytes: number) =>
  new AppError('invalid_publication', `line ${line}: longer than ${maxLineBytes} bytes (MAX_LINE_BYTES); nothing was published`);

const SLICE_BYTES = 1024 * 1024;

/**
 * The input's chunks a slice at a time, so one large chunk (a whole file handed over at once) is
 * never decoded into one string, scanned, nor made into a list of all its items, at once.
 */
async function* slicesOf(input: Readable): AsyncIterable<Buffer> {
  for await (const chunk of input as AsyncIterable<Buffer>) {
    for (let at = 0; at < chunk.length; at += SLICE_BYTES) yield chunk.subarray(at, at + SLICE_BYTES);
  }
}

/**
 * A JSON array of items, or an object whose "items" key holds one (every other top-level key is
 * checked and ignored, CONTRACT §9). Read by json-items.ts, not stream-json, which ran at
 * 0.12–0.46× NDJSON's speed (bench/json-parsers.ts).
 */
async function* readJson(input: Readable, maxItemBytes: number, framer: JsonItemFramer | null): AsyncIterable<RawItems> {
  const splitter = new JsonItemSplitter(maxItemBytes, framer);
  for await (const slice of slicesOf(input)) yield* itemGroups(splitter.push(slice));
  splitter.end();
}

/** A slice's items as groups over one buffer each: those the slice holds whole, and each one joined from several slices. */
function* itemGroups(items: readonly JsonItem[]): Iterable<RawItems> {
  for (let from = 0; from < items.length;) {
    const source = items[from].source;
    let to = from + 1;
    while (to < items.length && items[to].source === source) to++;
    const bounds = new Int32Array(2 * (to - from));
    for (let k = from; k < to; k++) [bounds[2 * (k - from)], bounds[2 * (k - from) + 1]] = [items[k].start, items[k].end];
    yield new RawItems(source, bounds, null, items[from].index);
    from = to;
  }
}

/**
 * NDJSON's lines found in its bytes, not decoded: a line (its CR and, on line 1, a byte-order
 * mark left out) is an item unless only white space. A line cut by a slice's end is joined into
 * bytes of its own; one over `maxLineBytes` is refused before it is held.
 */
async function* readNdjson(input: Readable, maxLineBytes: number): AsyncIterable<RawItems> {
  let line = 1;
  let pieces: Buffer[] = [];
  let pendingBytes = 0;
  const bounds: number[] = [];
  const lines: number[] = [];
  /** Notes the line `bytes[start, end)` (without its LF) when it holds an item. */
  const note = (bytes: Buffer, start: number, end: number) => {
    if (line === 1 && end - start >= 3 && bytes[start] === 0xef && bytes[start + 1] === 0xbb && bytes[start + 2] === 0xbf) start += 3;
    if (end > start && bytes[end - 1] === 13) end--;
    if (!blankLine(bytes, start, end)) {
      bounds.push(start, end);
      lines.push(line);
    }
  };
  const group = (bytes: Buffer) => {
    const items = new RawItems(bytes, Int32Array.from(bounds), Int32Array.from(lines), 0);
    bounds.length = 0;
    lines.length = 0;
    return items;
  };
  for await (const slice of slicesOf(input)) {
    let start = 0;
    for (let end = slice.indexOf(10); end !== -1; end = slice.indexOf(10, start)) {
      if (pendingBytes + end - start > maxLineBytes) throw tooLong(line, maxLineBytes);
      if (pieces.length > 0) {
        const joined = Buffer.concat([...pieces, slice.subarray(start, end)]);
        pieces = [];
        pendingBytes = 0;
        note(joined, 0, joined.length);
        if (bounds.length > 0) yield group(joined);
      } else {
        note(slice, start, end);
      }
      line++;
      start = end + 1;
    }
    if (bounds.length > 0) yield group(slice);
    if (start < slice.length) {
      pendingBytes += slice.length - start;
      if (pendingBytes > maxLineBytes) throw tooLong(line, maxLineBytes);
      pieces.push(slice.subarray(start));
    }
  }
  if (pieces.length > 0) {
    const joined = Buffer.concat(pieces);
    note(joined, 0, joined.length);
    if (bounds.length > 0) yield group(joined);
  }
}

/** Whether trim() would leave nothing of the line: only white space (other than ASCII's, rare, decoded to be sure). */
function blankLine(bytes: Buffer, start: number, end: number): boolean {
  for (let at = start; at < end; at++) {
    const byte = bytes[at];
    if (byte === 0x20 || (byte >= 0x09 && byte <= 0x0d)) continue;
    return byte >= 0x80 ? bytes.toString('utf8', start, end).trim() === '' : false;
  }
  return true;
}

/** A row whose JSON did not parse: validation reports it as a bad row instead of stopping. */
export class InvalidJson {
  constructor(readonly message: string) {}
}

/** Read by csv-records.ts, not csv-parse, which cost 80–100 µs a catalogue row (bench/csv-parsers.ts). */
async function* readCsv(input: Readable, maxLineBytes: number): AsyncIterable<SourceRow> {
  const splitter = new CsvRecordSplitter(maxLineBytes);
  const rows = new CsvRows();
  for await (const slice of slicesOf(input)) yield* rows.of(splitter.push(slice));
  yield* rows.of(splitter.end());
}

/**
 * A CSV publication's records found in its bytes by the store's framer and handed on unsplit
 * (CsvRecords), the header read here. From a record the framer hands over (it breaks the grammar
 * or the byte limit) csv-records.ts reads the rest, so a bad file gets its refusal to the word.
 */
async function* readCsvFramed(input: Readable, maxLineBytes: number, framer: CsvRecordFramer): AsyncIterable<SourceRow | CsvRecords> {
  const rows = new CsvRows();
  /** From the first record not yet framed. */
  let pending: Buffer = Buffer.alloc(0);
  /**
   * Slices held while a record longer than a slice arrives: it is framed again only once they
   * add as many bytes as `pending` holds, so a long record is scanned a few times, not once a
   * chunk (an upload's chunks are ~64 KiB; MAX_LINE_BYTES is 16 MiB).
   */
  let held: Buffer[] = [];
  let heldBytes = 0;
  /** The line `pending` begins on. */
  let line = 1;
  let started = false;
  /** csv-records.ts, once the framer handed over. */
  const handed: { splitter: CsvRecordSplitter | null } = { splitter: null };

  const withoutBom = (bytes: Buffer) => {
    if (started) return bytes;
    started = true;
    return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  };

  function* framed(bytes: Buffer, atEnd: boolean): Iterable<SourceRow | CsvRecords> {
    const frame = framer(bytes, 0, atEnd, maxLineBytes);
    let { bounds, lines } = frame;
    if (rows.names === null && bounds.length > 0) {
      rows.names = checkCsvHeader(CsvRecordSplitter.fieldsOf(bytes.subarray(bounds[0], bounds[1])));
      [bounds, lines] = [bounds.subarray(2), lines.subarray(1)];
    }
    if (bounds.length > 0) yield new CsvRecords(bytes, bounds, lines.map((lfs) => line + lfs), rows.names!);
    line += frame.lfs;
    pending = bytes.subarray(frame.next);
    held = [];
    heldBytes = 0;
    // A record too long (framed, or still not whole) or breaking the grammar: csv-records.ts says which.
    if (frame.handOver || pending.length > maxLineBytes) {
      handed.splitter = new CsvRecordSplitter(maxLineBytes, { line });
      yield* rows.of(handed.splitter.push(pending));
      pending = Buffer.alloc(0);
    }
  }

  for await (const slice of slicesOf(input)) {
    if (handed.splitter !== null) {
      yield* rows.of(handed.splitter.push(slice));
      continue;
    }
    held.push(slice);
    heldBytes += slice.length;
    if (heldBytes < pending.length && pending.length + heldBytes <= maxLineBytes) continue;
    const bytes = pending.length === 0 && held.length === 1 ? slice : Buffer.concat([pending, ...held]);
    [pending, held, heldBytes] = [Buffer.alloc(0), [], 0];
    // The byte-order mark, skipped once it can be seen whole.
    if (!started && bytes.length < 3) pending = bytes;
    else yield* framed(withoutBom(bytes), false);
  }
  if (handed.splitter === null) yield* framed(withoutBom(Buffer.concat([pending, ...held])), true);
  if (handed.splitter !== null) yield* rows.of(handed.splitter.end());
}

/** CSV records as rows: the first names the columns, each other one is a row of as many fields. */
class CsvRows {
  names: string[] | null = null;

  *of(records: readonly CsvRecord[]): Iterable<SourceRow> {
    for (const { fields, line } of records) {
      if (this.names === null) this.names = checkCsvHeader(fields);
      else yield csvRow(this.names, fields, line);
    }
  }
}

function csvRow(names: readonly string[], fields: readonly string[], line: number): SourceRow {
  if (fields.length !== names.length) throw notValidCsv(`line ${line}: ${fields.length} field(s), where the header names ${names.length}`);
  const raw: Record<string, string> = {};
  for (let k = 0; k < names.length; k++) raw[names[k]] = fields[k];
  return { position: `line ${line}`, raw, text: true };
}

const notValidCsv = (why: string) => new AppError('invalid_publication', `the file is not valid CSV: ${why}`);

/** csv-records.ts's refusals as the publication's. */
async function* refusingCsv<T>(rows: AsyncIterable<T>, maxLineBytes: number): AsyncIterable<T> {
  try {
    yield* rows;
  } catch (error) {
    if (error instanceof CsvRecordTooLong) throw tooLong(error.line, maxLineBytes);
    if (error instanceof CsvSyntaxError) throw notValidCsv(error.message);
    throw error;
  }
}

const CSV_FIELDS = new Set([
  'offer_id', 'name', 'price', 'old_price', 'purchase_price', 'currency', 'available', 'quantity', 'url', 'picture',
  'vendor', 'vendor_code', 'barcode', 'description', 'category', 'competitors', 'attributes',
]);

function checkCsvHeader(header: string[]): string[] {
  const names = header.map((name) => name.trim());
  const unknown = names.filter((name) => !CSV_FIELDS.has(name) && !name.startsWith('attributes.'));
  if (unknown.length > 0) {
    throw new AppError('invalid_publication', `line 1: unknown column(s) ${unknown.map((n) => `"${n}"`).join(', ')}; a CSV header names item fields or attributes.<key>`);
  }
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new AppError('invalid_publication', `line 1: column "${name}" appears twice`);
    seen.add(name);
  }
  return names;
}
