import { StringDecoder } from 'node:string_decoder';
import { pipeline, type Duplex, type Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import pick from 'stream-json/filters/pick.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { AppError } from '../errors/app-error.js';

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

/** Reads a publication as a stream of rows; the file is never held whole. */
export function readSource(input: Readable, format: SourceFormat): AsyncIterable<SourceRow> {
  if (format === 'ndjson') return readNdjson(input);
  if (format === 'csv') return readCsv(input);
  return readJson(input);
}

async function* readJson(input: Readable): AsyncIterable<SourceRow> {
  const { first, stream } = await peekFirstCharacter(input);
  if (first !== '[' && first !== '{') {
    throw new AppError('invalid_publication', 'a JSON publication must be an array of items or an object {"items": [...]}');
  }
  // A top-level object: stream its "items" array and ignore every other key (CONTRACT §9).
  const items = first === '[' ? chain(stream, streamArray.withParserAsStream()) : chain(stream, pick.withParserAsStream({ filter: 'items' }), streamArray.asStream());
  try {
    for await (const { key, value } of items as AsyncIterable<{ key: number; value: unknown }>) {
      yield { position: `items[${key}]`, raw: value, text: false };
    }
  } catch (error) {
    throw new AppError('invalid_publication', `the file is not valid JSON: ${(error as Error).message}`);
  }
}

async function* readNdjson(input: Readable): AsyncIterable<SourceRow> {
  let line = 0;
  for await (const text of splitLines(input)) {
    line++;
    if (text.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      raw = new InvalidJson((error as Error).message);
    }
    yield { position: `line ${line}`, raw, text: false };
  }
}

/**
 * Lines of a UTF-8 stream (LF or CRLF). Not readline: its iterator neither passes on the
 * input's errors nor notices an early close, so a cut-off upload would wait forever.
 */
async function* splitLines(input: Readable): AsyncIterable<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of input) {
    const lines = (rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk))).split('\n');
    rest = lines.pop() ?? '';
    for (const text of lines) yield text.endsWith('\r') ? text.slice(0, -1) : text;
  }
  rest += decoder.end();
  if (rest !== '') yield rest.endsWith('\r') ? rest.slice(0, -1) : rest;
}

/** A row whose JSON did not parse: validation reports it as a bad row instead of stopping. */
export class InvalidJson {
  constructor(readonly message: string) {}
}

async function* readCsv(input: Readable): AsyncIterable<SourceRow> {
  const parser = chain(input, parseCsv({ columns: checkCsvHeader, bom: true, info: true, relax_column_count: false, skip_empty_lines: true }));
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      yield { position: `line ${info.lines}`, raw: record, text: true };
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('invalid_publication', `the file is not valid CSV: ${(error as Error).message}`);
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

/** Looks at the first non-blank character without consuming the stream (a leading BOM is dropped). */
async function peekFirstCharacter(input: Readable): Promise<{ first: string; stream: Readable }> {
  const seen: Buffer[] = [];
  for (;;) {
    const chunk = input.read() as Buffer | string | null;
    if (chunk === null) {
      if (input.readableEnded || input.destroyed) break;
      await new Promise<void>((resolve, reject) => {
        const done = () => { input.off('readable', done); input.off('end', done); input.off('error', fail); resolve(); };
        const fail = (error: Error) => { input.off('readable', done); input.off('end', done); reject(error); };
        input.once('readable', done).once('end', done).once('error', fail);
      });
      continue;
    }
    seen.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    let text = Buffer.concat(seen);
    if (text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf) text = text.subarray(3);
    const first = text.toString('utf8').trimStart()[0];
    if (first !== undefined) {
      input.unshift(text);
      return { first, stream: input };
    }
  }
  throw new AppError('invalid_publication', 'the file is empty');
}
