import { overUtf8Limit } from './text-decoding.js';

/*
 * The records of a CSV publication (RFC 4180: `,` between fields, `"` around a field that holds
 * one, doubled inside it), read from UTF-8 bytes as they arrive. A record ends at LF, and a CR
 * just before it is dropped, so LF and CRLF files read alike (and a file that mixes them). A
 * BOM at the start is skipped; lines with nothing on them are skipped.
 *
 * Strict where a publication must be: a quote inside an unquoted field, text after a closing
 * quote, a quote still open at the end, and a record whose field count differs from the
 * header's each refuse the file with the line, as csv-parse did.
 *
 * Hand-written because no library was both strict and fast (bench/csv-parsers.ts, 200k rows,
 * 5 rounds, medians through the same UTF-8 check; bench/RESULTS.md, "2026-11-26, afternoon"):
 * on catalogue rows (~840 bytes, JSON in cells, Cyrillic) csv-parse, which this replaces, took
 * ~81 µs a row, more than NDJSON's whole read (25 µs); csv-parser 1.6× csv-parse's speed,
 * papaparse 2.6×, uDSV 3.4×, this reader 4.6× (1.4× NDJSON). uDSV (6.4× on lean rows, this
 * reader 3.7×) merges a short row into the next and reads an unclosed quote as a field without
 * a word; papaparse and csv-parser give a row no line (with quoted line breaks a row's index
 * is not its line), and papaparse holds a quoted field left open however long it grows.
 *
 * The scanner works on each chunk decoded to a string (TextDecoder keeps a character cut
 * between chunks whole) and slices fields out of it; a field cut between chunks is carried as
 * text, so a long record is scanned once, never again per chunk.
 */

/** One record: its fields, and the line it ends on (1-based, as an editor numbers lines). */
export interface CsvRecord {
  fields: string[];
  line: number;
}

/** A refusal of the file: `line N: why`. The reader wraps it as invalid_publication. */
export class CsvSyntaxError extends Error {}

/** The record being read grew past the limit (the reader answers with MAX_LINE_BYTES' refusal). */
export class CsvRecordTooLong extends Error {
  constructor(readonly line: number) {
    super(`line ${line}: record too long`);
  }
}

// Where the scanner stands.
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const AFTER_QUOTE = 3; // a quote inside a quoted field: its end, or the first of a doubled pair
const AFTER_QUOTE_CR = 4; // a CR after the closing quote: only LF may follow

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const BOM = 0xfeff;

const quoteInsideField = (line: number) =>
  new CsvSyntaxError(`line ${line}: a quote inside a field that does not begin with one; quote the whole field and double the quotes inside it ("")`);
const textAfterClosingQuote = (line: number) =>
  new CsvSyntaxError(`line ${line}: text after a closing quote; a quoted field ends at its closing quote, and a quote inside it is doubled ("")`);

export class CsvRecordSplitter {
  /**
   * Keeps a character cut between chunks for the next one. TextDecoder, not Buffer#toString or
   * StringDecoder: it decoded these files' Cyrillic in half the time (toString took a fifth of
   * this reader's time in a profile). The BOM is left in, so that only one is skipped, below.
   */
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private started = false;
  private state = FIELD_START;
  private fields: string[] = [];
  /** The current field's text read so far: in earlier chunks, or before a doubled quote (which it holds as one). */
  private carried = '';
  /** Whether a field of the current record was quoted (a line holding `""` is a record, an empty line is not). */
  private quotedInRecord = false;
  /** LFs seen so far: the line being read is `lfs + 1`. */
  private lfs = 0;
  /** The line of the last opening quote, for a file that ends inside its field. */
  private quoteLine = 0;
  /** Where the current record begins in the chunk being scanned (0 when it began in an earlier one), and its bytes in earlier chunks. */
  private recordStart = 0;
  private recordBytesBefore = 0;
  /**
   * A refusal found in a chunk after records that end in it: told at the next call, once those
   * records are read (one of them may have a problem of its own, told first). So the first
   * problem in the file is the one told, however the upload is cut.
   */
  private failure: Error | null = null;

  /**
   * `from`: where in a file the bytes begin, when not at its start (a store's framer read the
   * records before, publication-source.ts): the line there, and no byte-order mark to skip.
   */
  constructor(private readonly maxRecordBytes: number, from?: { line: number }) {
    if (from) {
      this.started = true;
      this.lfs = from.line - 1;
    }
  }

  /** The fields of one whole record, its LF left out (a store's framer found it: store/item-rows/native/csv_frame.c). */
  static fieldsOf(record: Buffer): string[] {
    const splitter = new CsvRecordSplitter(Number.MAX_SAFE_INTEGER, { line: 1 });
    const [{ fields }] = [...splitter.push(record), ...splitter.end()];
    return fields;
  }

  /** The records that end in this chunk, in order. */
  push(chunk: Buffer): CsvRecord[] {
    if (this.failure !== null) throw this.failure;
    let text = this.decoder.decode(chunk, { stream: true });
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
    }
    const records: CsvRecord[] = [];
    try {
      this.scan(text, records);
    } catch (error) {
      if (records.length === 0) throw error;
      this.failure = error as Error;
    }
    return records;
  }

  /** The last record, when the file does not end with LF; refuses a quote left open. */
  end(): CsvRecord[] {
    if (this.failure !== null) throw this.failure;
    const records: CsvRecord[] = [];
    // Bytes of a character the file never finished: the UTF-8 check before this refuses them, so here they are only U+FFFD.
    this.scan(this.decoder.decode(), records);
    switch (this.state) {
      case QUOTED:
        throw new CsvSyntaxError(`line ${this.quoteLine}: the quoted field opened here is not closed by the end of the file (is the file cut short?)`);
      case UNQUOTED:
        this.endField(withoutCr(this.carried));
        break;
      case AFTER_QUOTE:
      case AFTER_QUOTE_CR:
        this.endField(this.carried);
        break;
      case FIELD_START:
        // A last line ending in a comma has one more, empty, field; nothing at all is no record.
        if (this.fields.length === 0) return records;
        this.endField('');
    }
    this.endRecord(records, '', 0, false);
    return records;
  }

  private scan(text: string, records: CsvRecord[]): void {
    const n = text.length;
    let i = 0;
    let from = 0; // where the current field's text in this chunk begins
    while (i < n) {
      switch (this.state) {
        case FIELD_START:
          if (text.charCodeAt(i) === QUOTE) {
            this.state = QUOTED;
            this.quotedInRecord = true;
            this.quoteLine = this.lfs + 1;
            from = ++i;
            continue;
          }
          this.state = UNQUOTED;
          from = i;
        // falls through: this character is the field's first
        case UNQUOTED: {
          let c = 0;
          while (i < n) {
            c = text.charCodeAt(i);
            if (c === COMMA || c === LF || c === QUOTE) break;
            i++;
          }
          if (i === n) {
            this.carried += text.slice(from, n);
            continue;
          }
          if (c === QUOTE) throw quoteInsideField(this.lfs + 1);
          const value = this.carried === '' ? text.slice(from, i) : this.carried + text.slice(from, i);
          i++;
          if (c === COMMA) {
            this.endField(value);
          } else {
            this.endField(withoutCr(value));
            this.endRecord(records, text, i, true);
          }
          this.state = FIELD_START;
          continue;
        }
        case QUOTED: {
          const start = i;
          // The closing quote: the first not doubled. A doubled one adds its text and one quote.
          let close = text.indexOf('"', i);
          while (close >= 0 && close + 1 < n && text.charCodeAt(close + 1) === QUOTE) {
            this.carried += text.slice(from, close + 1);
            from = close + 2;
            close = text.indexOf('"', from);
          }
          const end = close < 0 ? n : close;
          for (let lf = text.indexOf('\n', start); lf >= 0 && lf < end; lf = text.indexOf('\n', lf + 1)) this.lfs++;
          if (close < 0 || close === n - 1) {
            // No quote yet, or one that ends the chunk: a closing one or the first of a pair, as the next chunk says.
            this.carried += text.slice(from, end);
            if (close >= 0) this.state = AFTER_QUOTE;
            i = n;
            continue;
          }
          const value = this.carried === '' ? text.slice(from, close) : this.carried + text.slice(from, close);
          this.carried = '';
          i = this.closed(value, text, close + 1, records);
          from = i;
          continue;
        }
        case AFTER_QUOTE:
          // The last chunk ended with a quote: the first of a pair goes on as one quote of text.
          if (text.charCodeAt(i) === QUOTE) {
            this.carried += '"';
            from = ++i;
            this.state = QUOTED;
            continue;
          }
          {
            const value = this.carried;
            this.carried = '';
            i = this.closed(value, text, i, records);
            from = i;
          }
          continue;
        case AFTER_QUOTE_CR:
          if (text.charCodeAt(i) !== LF) throw textAfterClosingQuote(this.lfs + 1);
          this.endField(this.carried);
          this.endRecord(records, text, ++i, true);
          this.state = FIELD_START;
          continue;
      }
    }
    // The record goes on in the next chunk: what it took here counts against the limit now,
    // so an endless record is refused as it grows, not once it is held whole.
    if (this.recordStart < n) {
      this.recordBytesBefore += Buffer.byteLength(text.slice(this.recordStart, n));
      if (this.recordBytesBefore > this.maxRecordBytes) throw new CsvRecordTooLong(this.lfs + 1);
    }
    this.recordStart = 0;
  }

  /** A quoted field's `value` ended by the quote just before `at`: what follows must end the field. Returns where scanning goes on. */
  private closed(value: string, text: string, at: number, records: CsvRecord[]): number {
    const c = text.charCodeAt(at);
    if (c === COMMA) {
      this.endField(value);
      this.state = FIELD_START;
    } else if (c === LF) {
      this.endField(value);
      this.endRecord(records, text, at + 1, true);
      this.state = FIELD_START;
    } else if (c === CR) {
      this.carried = value;
      this.state = AFTER_QUOTE_CR;
    } else {
      throw textAfterClosingQuote(this.lfs + 1);
    }
    return at + 1;
  }

  private endField(value: string): void {
    this.fields.push(ownCopy(value));
    this.carried = '';
  }

  /** Ends the record at `end` in `text` (just after its LF, when `byLf`). */
  private endRecord(records: CsvRecord[], text: string, end: number, byLf: boolean): void {
    // Its bytes, LF excluded.
    if (overUtf8Limit(this.recordBytesBefore, text, this.maxRecordBytes, this.recordStart, byLf ? end - 1 : end)) throw new CsvRecordTooLong(this.lfs + 1);
    if (byLf) this.lfs++;
    const fields = this.fields;
    // A line with nothing on it is no record (a line holding "" is one).
    if (fields.length > 1 || fields[0] !== '' || this.quotedInRecord) records.push({ fields, line: byLf ? this.lfs : this.lfs + 1 });
    this.fields = [];
    this.quotedInRecord = false;
    this.recordStart = end;
    this.recordBytesBefore = 0;
  }
}

/** The last field of a line without the CR of a CRLF line end. */
const withoutCr = (value: string): string => (value.charCodeAt(value.length - 1) === CR ? value.slice(0, -1) : value);

/**
 * A field as a string of its own. A slice of 13 characters or more is, in V8, a view into its
 * chunk's text, and keeps all of it (~100 KiB, two bytes a character once it holds Cyrillic)
 * alive while any item holds the field: a publication's peak RSS grew by 227 MiB (206–233)
 * where csv-parse's fields gave 188 (bench/RESULTS.md, "2026-11-26, afternoon"). Prefixing makes
 * a cons string, which `slice` flattens into a new string first: one copy of the field.
 */
function ownCopy(value: string): string {
  return value.length < 13 ? value : ` ${value}`.slice(1);
}
