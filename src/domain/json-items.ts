import { AppError } from '../errors/app-error.js';
import type { JsonItemFramer } from '../store/types.js';

/*
 * The items of a JSON publication (`[item, …]` or `{"items": [item, …], …}`), found in its
 * bytes as they arrive: a scanner finds where each item ends (tracking strings, escapes and
 * depth; strings are skipped with indexOf; every character it looks for is ASCII, which no byte
 * of a longer UTF-8 character can be), and hands on each item's bytes undecoded, for the store's
 * native reader or `JSON.parse` (itemValue), which do the validating. Between items the scanner
 * checks the structure itself (commas, the closing bracket, nothing after it), and the other
 * top-level keys' values are parsed and dropped, so a file stream-json refused is still refused.
 *
 * Hand-written because no library kept up (bench/json-parsers.ts, 300k items, 5 rounds,
 * median items/s ÷ NDJSON through readSource): stream-json's pick + streamArray, which this
 * replaces, ran at 0.28× (array) and 0.12× ({"items"}) on catalogue items with competitors,
 * attributes and Cyrillic; with packed tokens only 0.48× / 0.33×; @streamparser/json 0.42×;
 * this 0.93× / 0.94× (1.27× on lean items, where NDJSON's per-line generators cost more).
 *
 * Only one item (or one ignored top-level value) is held at a time, and never more than
 * `maxItemBytes` of it: a longer one refuses the file as soon as it passes the limit.
 */

/** One item of the items array: its bytes, `source` from `start` to `end`. */
export interface JsonItem {
  /** 0-based index in the items array. */
  index: number;
  source: Buffer;
  start: number;
  end: number;
}

/** An item's value, or the file's refusal when it is not JSON. */
export function itemValue(item: JsonItem): unknown {
  try {
    return JSON.parse(item.source.toString('utf8', item.start, item.end));
  } catch (error) {
    throw new AppError('invalid_publication', `items[${item.index}]: not valid JSON (${(error as Error).message}); nothing was published`);
  }
}

// What the scanner expects next, outside a value.
const START = 0;
const ITEM_OR_END = 1; // after `[`
const ITEM = 2; // after `,` inside the items array
const COMMA_OR_END = 3; // after an item
const KEY_OR_END = 4; // after the top-level `{`
const KEY = 5; // after `,` in the top-level object
const COLON = 6;
const OBJECT_VALUE = 7;
const OBJECT_COMMA_OR_END = 8;
const DONE = 9;

// What the value being read is.
const NO_VALUE = 0;
const ITEM_VALUE = 1;
const KEY_VALUE = 2;
const IGNORED_VALUE = 3;

// Every character the scanner looks for is ASCII: in UTF-8, no byte of another character is one.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON_CODE = 0x3a;

/** How many backslashes run back from just before `end`, not looking before `from`. */
function backslashesBefore(bytes: Buffer, end: number, from: number): number {
  let at = end;
  while (at > from && bytes[at - 1] === BACKSLASH) at--;
  return end - at;
}

const BOM = [0xef, 0xbb, 0xbf];

const isWhitespace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/** Feed it the publication's chunks in order (`push`), then `end`; it throws the file's refusal. */
export class JsonItemSplitter {
  private expect = START;
  /** Whether the items array is the top-level value (else it is the object's "items"). */
  private topLevelArray = false;
  private itemsSeen = false;
  private index = 0;
  /** The current chunk, and the bytes before it: for the positions in error messages. */
  private chunk: Buffer = Buffer.alloc(0);
  private offset = 0;
  /** The bytes of a byte-order mark read at the start so far. */
  private bomBytes = 0;

  // The value being read, possibly across chunks.
  private value = NO_VALUE;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** A number, true, false or null: it ends at the first character that cannot be part of it. */
  private scalar = false;
  private pieces: Buffer[] = [];
  private pendingBytes = 0;
  private key = '';

  /** `framer`: the store's native framer of items (types.ts JsonItemFramer), asked at each item; null: this scanner reads them all. */
  constructor(
    private readonly maxItemBytes: number,
    private readonly framer: JsonItemFramer | null = null,
  ) {}

  /** The items that end in `chunk`, in order. Throws the file's refusal at the first fault. */
  push(chunk: Buffer): JsonItem[] {
    const items: JsonItem[] = [];
    this.chunk = chunk;
    const length = chunk.length;
    // A byte-order mark at the very start is dropped, even cut across chunks.
    let i = 0;
    while (this.offset + i < BOM.length && this.bomBytes === this.offset + i && i < length && chunk[i] === BOM[this.offset + i]) {
      this.bomBytes++;
      i++;
    }
    while (i < length) {
      if (this.value !== NO_VALUE) {
        const end = this.scanValue(chunk, i);
        if (end === -1) {
          this.hold(chunk, i, length);
          break;
        }
        this.finishValue(chunk, i, end, items);
        i = end;
        continue;
      }
      const code = chunk[i];
      if (isWhitespace(code)) {
        i++;
        continue;
      }
      if (this.framer !== null && (this.expect === ITEM_OR_END || this.expect === ITEM) && code !== CLOSE_BRACKET) {
        // The store's framer finds a run of whole items natively, by the rules of scanValue (~3 µs a rich item less than it).
        const bounds = this.framer(chunk, i);
        if (bounds.length > 0) {
          for (let k = 0; k < bounds.length; k += 2) {
            if (bounds[k + 1] - bounds[k] > this.maxItemBytes) throw this.tooLong(ITEM_VALUE);
            items.push({ index: this.index++, source: chunk, start: bounds[k], end: bounds[k + 1] });
          }
          this.expect = COMMA_OR_END;
          i = bounds[bounds.length - 1];
          continue;
        }
      }
      this.step(code, i);
      if (this.value === NO_VALUE) i++;
    }
    this.offset += length;
    this.chunk = Buffer.alloc(0);
    return items;
  }

  /** Called once the input has ended: a file cut short is refused. */
  end(): void {
    if (this.value !== NO_VALUE) throw this.invalid(`the file ends inside ${this.where()}`, 0);
    if (this.expect === START) throw new AppError('invalid_publication', 'the file is empty');
    if (this.expect !== DONE) throw this.invalid(`the file ends before the ${this.topLevelArray ? 'array' : 'object'} is closed`, 0);
  }

  /** One structural character outside any value, at `at` in the current chunk's text. */
  private step(code: number, at: number): void {
    switch (this.expect) {
      case START:
        if (code === OPEN_BRACKET) {
          this.topLevelArray = true;
          this.itemsSeen = true;
          this.expect = ITEM_OR_END;
        } else if (code === OPEN_BRACE) {
          this.expect = KEY_OR_END;
        } else {
          throw new AppError('invalid_publication', 'a JSON publication must be an array of items or an object {"items": [...]}');
        }
        return;
      case ITEM_OR_END:
        if (code === CLOSE_BRACKET) return this.closeItems();
        return this.beginValue(ITEM_VALUE, code, at);
      case ITEM:
        return this.beginValue(ITEM_VALUE, code, at);
      case COMMA_OR_END:
        if (code === COMMA) this.expect = ITEM;
        else if (code === CLOSE_BRACKET) this.closeItems();
        else throw this.invalid(`expected "," or "]" after items[${this.index - 1}]`, at);
        return;
      case KEY_OR_END:
      case KEY:
        if (code === CLOSE_BRACE && this.expect === KEY_OR_END) this.expect = DONE;
        else if (code === QUOTE) this.beginValue(KEY_VALUE, code, at);
        else throw this.invalid('expected a key in the top-level object', at);
        return;
      case COLON:
        if (code !== COLON_CODE) throw this.invalid(`expected ":" after the key ${JSON.stringify(this.key)}`, at);
        this.expect = OBJECT_VALUE;
        return;
      case OBJECT_VALUE:
        if (this.key !== 'items') return this.beginValue(IGNORED_VALUE, code, at);
        // A second "items" key is refused: a parser would publish both arrays, or keep only the last.
        if (this.itemsSeen) throw new AppError('invalid_publication', 'the key "items" appears twice in the top-level object');
        if (code !== OPEN_BRACKET) throw this.invalid('"items" must be an array of items', at);
        this.itemsSeen = true;
        this.expect = ITEM_OR_END;
        return;
      case OBJECT_COMMA_OR_END:
        if (code === COMMA) this.expect = KEY;
        else if (code === CLOSE_BRACE) this.expect = DONE;
        else throw this.invalid('expected "," or "}" in the top-level object', at);
        return;
      default:
        throw this.invalid(`unexpected ${JSON.stringify(this.characterAt(at))} after the end of the JSON value`, at);
    }
  }

  private closeItems(): void {
    this.expect = this.topLevelArray ? DONE : OBJECT_COMMA_OR_END;
  }

  private beginValue(kind: number, code: number, at: number): void {
    if (code === CLOSE_BRACKET || code === CLOSE_BRACE || code === COMMA || code === COLON_CODE) {
      throw this.invalid(kind === ITEM_VALUE ? `expected items[${this.index}], found "${String.fromCharCode(code)}"` : `expected a value, found "${String.fromCharCode(code)}"`, at);
    }
    this.value = kind;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.scalar = code !== QUOTE && code !== OPEN_BRACE && code !== OPEN_BRACKET;
  }

  /**
   * Reads the current value from `start`: the index just past its last character, or -1 when it
   * runs past the chunk. A scalar ends before the character that ends it, which is then read as
   * structure.
   */
  private scanValue(bytes: Buffer, start: number): number {
    const length = bytes.length;
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    let i = start;
    /** Where a run of backslashes may begin: not before an escaped character. */
    let floor = start;
    if (this.scalar) {
      for (; i < length; i++) {
        const code = bytes[i];
        if (code === COMMA || code === CLOSE_BRACKET || code === CLOSE_BRACE || isWhitespace(code)) return i;
      }
      return -1;
    }
    while (i < length) {
      if (inString) {
        if (escaped) {
          // The chunk starts with the character a backslash at the end of the last one escapes.
          escaped = false;
          floor = ++i;
          continue;
        }
        // Strings are most of an item's bytes: jump to the next quote natively, then see
        // whether an odd run of backslashes escapes it (a loop over each character took a third of the time).
        const quote = bytes.indexOf(QUOTE, i);
        if (quote === -1) {
          escaped = backslashesBefore(bytes, length, i) % 2 === 1;
          i = length;
          break;
        }
        i = quote + 1;
        if (backslashesBefore(bytes, quote, floor) % 2 === 1) continue;
        inString = false;
        if (depth === 0) return i;
        continue;
      }
      const code = bytes[i++];
      if (code === QUOTE) inString = true;
      else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
      else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        if (--depth === 0) return i;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return -1;
  }

  /** Keeps the start of a value that runs past this chunk, refusing it once it is over the limit. */
  private hold(bytes: Buffer, start: number, end: number): void {
    this.pendingBytes += end - start;
    if (this.pendingBytes > this.maxItemBytes) throw this.tooLong();
    // A view: a stream's chunks are not written again once read.
    this.pieces.push(bytes.subarray(start, end));
  }

  private finishValue(chunk: Buffer, start: number, end: number, items: JsonItem[]): void {
    if (this.pendingBytes + end - start > this.maxItemBytes) throw this.tooLong();
    // An item cut by the chunk's end is joined into bytes of its own; the rest stay views of the chunk.
    const joined = this.pieces.length === 0 ? null : Buffer.concat([...this.pieces, chunk.subarray(start, end)]);
    const item: JsonItem = joined === null ? { index: this.index, source: chunk, start, end } : { index: this.index, source: joined, start: 0, end: joined.length };
    this.pieces = [];
    this.pendingBytes = 0;
    const kind = this.value;
    this.value = NO_VALUE;
    if (kind === ITEM_VALUE) {
      items.push(item);
      this.index++;
      this.expect = COMMA_OR_END;
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(item.source.toString('utf8', item.start, item.end));
    } catch (error) {
      throw new AppError('invalid_publication', `${this.where(kind)}: not valid JSON (${(error as Error).message}); nothing was published`);
    }
    if (kind === KEY_VALUE) {
      this.key = parsed as string;
      this.expect = COLON;
    } else {
      this.expect = OBJECT_COMMA_OR_END;
    }
  }

  /** Where the current value stands, as a position: `items[3]`, or the top-level key. */
  private where(kind = this.value): string {
    if (kind === ITEM_VALUE) return `items[${this.index}]`;
    if (kind === KEY_VALUE) return 'a key of the top-level object';
    return `the top-level key ${JSON.stringify(this.key)}`;
  }

  private tooLong(kind = this.value): AppError {
    return new AppError('invalid_publication', `${this.where(kind)}: longer than ${this.maxItemBytes} bytes (MAX_LINE_BYTES); nothing was published`);
  }

  /** A refusal at `at` in the current chunk (after a chunk: at the end of the file), named by its byte. */
  private invalid(reason: string, at: number): AppError {
    return new AppError('invalid_publication', `the file is not valid JSON: ${reason} (byte ${this.offset + at + 1})`);
  }

  /** The character (the UTF-16 unit, as String#charAt gives it) that starts at `at` in the current chunk. */
  private characterAt(at: number): string {
    return this.chunk.toString('utf8', at, Math.min(at + 4, this.chunk.length)).charAt(0);
  }
}
