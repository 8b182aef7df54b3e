import { pipeline, type Duplex, type Readable } from 'node:stream';
import { DEFAULT_MAX_LINE_BYTES } from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import { CsvRecordSplitter, CsvRecordTooLong, CsvSyntaxError, type CsvRecord } from './csv-records.js';
import { JsonItemSplitter } from './json-items.js';
import { decodedAsUtf8, overUtf8Limit, type SourceEncoding } from './text-decoding.js';

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

/** How a publication is read. */
export interface SourceOptions {
  /** What the bytes are in; 'utf-8' (the default) is checked, and invalid bytes refuse the file. */
  encoding?: SourceEncoding;
  /** The longest NDJSON line, CSV record or JSON item, in bytes (MAX_LINE_BYTES): a longer one refuses the file instead of filling memory. */
  maxLineBytes?: number;
}

/**
 * Reads a publication as a stream of rows; the file is never held whole. Whatever goes wrong
 * while reading (bad bytes, a line over the limit, a parser's own failure) comes out as one
 * `invalid_publication` refusal, never as an unexpected error.
 */
export function readSource(input: Readable, format: SourceFormat, options: SourceOptions = {}): AsyncIterable<SourceRow> {
  const text = chain(input, decodedAsUtf8(options.encoding ?? 'utf-8'));
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (format === 'ndjson') return refusingOnFailure(readNdjson(text, maxLineBytes));
  if (format === 'csv') return refusingOnFailure(readCsv(text, maxLineBytes));
  return refusingOnFailure(readJson(text, maxLineBytes));
}

async function* refusingOnFailure(rows: AsyncIterable<SourceRow>): AsyncIterable<SourceRow> {
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
async function* readJson(input: Readable, maxItemBytes: number): AsyncIterable<SourceRow> {
  const splitter = new JsonItemSplitter(maxItemBytes);
  for await (const slice of slicesOf(input)) {
    for (const { index, value } of splitter.push(slice)) yield { position: `items[${index}]`, raw: value, text: false };
  }
  splitter.end();
}

async function* readNdjson(input: Readable, maxLineBytes: number): AsyncIterable<SourceRow> {
  let line = 0;
  for await (const text of textLines(slicesOf(input), maxLineBytes)) {
    line++;
    const start = line === 1 && text.charCodeAt(0) === 0xfeff ? 1 : 0;
    const end = text.charCodeAt(text.length - 1) === 13 ? text.length - 1 : text.length;
    const json = start === 0 && end === text.length ? text : text.slice(start, end);
    if (json.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(json);
    } catch (error) {
      raw = new InvalidJson((error as Error).message);
    }
    yield { position: `line ${line}`, raw, text: false };
  }
}

/**
 * Lines of a UTF-8 byte stream as text (LF; the reader drops a CR before it). Each chunk is
 * decoded once, not each line: a `toString` per line took 1.6× as long (bench/RESULTS.md,
 * "2026-11-26, evening"). A line's pieces are joined once, when its LF arrives (re-splitting a
 * growing rest made a 64 MB line take 20 s), and a line over `maxLineBytes` is refused before
 * it is held. Not readline: its iterator neither passes on the input's errors nor notices an
 * early close, so a cut-off upload would wait forever.
 */
export async function* textLines(input: AsyncIterable<Buffer>, maxLineBytes: number): AsyncIterable<string> {
  // The bytes were checked as UTF-8 before (text-decoding.ts), so nothing here is replaced.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let pieces: string[] = [];
  let pendingBytes = 0;
  let line = 1;
  for await (const chunk of input) {
    const text = decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      const last = text.slice(start, end);
      if (overUtf8Limit(pendingBytes, last, maxLineBytes)) throw tooLong(line, maxLineBytes);
      yield pieces.length === 0 ? last : pieces.join('') + last;
      pieces = [];
      pendingBytes = 0;
      line++;
      start = end + 1;
    }
    if (start < text.length) {
      const rest = text.slice(start);
      pendingBytes += Buffer.byteLength(rest);
      if (pendingBytes > maxLineBytes) throw tooLong(line, maxLineBytes);
      pieces.push(rest);
    }
  }
  if (pieces.length > 0) yield pieces.join('');
}

/** A row whose JSON did not parse: validation reports it as a bad row instead of stopping. */
export class InvalidJson {
  constructor(readonly message: string) {}
}

/** Read by csv-records.ts, not csv-parse, which cost 80–100 µs a catalogue row (bench/csv-parsers.ts). */
async function* readCsv(input: Readable, maxLineBytes: number): AsyncIterable<SourceRow> {
  const splitter = new CsvRecordSplitter(maxLineBytes);
  let names: string[] | null = null;
  function* rowsOf(records: readonly CsvRecord[]): Iterable<SourceRow> {
    for (const { fields, line } of records) {
      if (names === null) {
        names = checkCsvHeader(fields);
        continue;
      }
      if (fields.length !== names.length) throw new CsvSyntaxError(`line ${line}: ${fields.length} field(s), where the header names ${names.length}`);
      const raw: Record<string, string> = {};
      for (let k = 0; k < names.length; k++) raw[names[k]] = fields[k];
      yield { position: `line ${line}`, raw, text: true };
    }
  }
  try {
    for await (const slice of slicesOf(input)) yield* rowsOf(splitter.push(slice));
    yield* rowsOf(splitter.end());
  } catch (error) {
    if (error instanceof CsvRecordTooLong) throw tooLong(error.line, maxLineBytes);
    if (error instanceof CsvSyntaxError) throw new AppError('invalid_publication', `the file is not valid CSV: ${error.message}`);
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
