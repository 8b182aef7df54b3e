import { extraJson } from '../item-row.js';
import { quoteFree } from '../quote-free.js';
import type { SequencedItem } from '../types.js';

/*
 * A stored item row in PostgreSQL's COPY text format, the row format both dialects take: a
 * PostgreSQL COPY, and SQLite's price_export_copy_rows (sqlite/native/copy_rows.c). The native
 * reader (native/item_rows.c) writes the same rows straight from the items' texts (for
 * PostgreSQL in COPY's binary format, framed by the header and trailer below); these are the
 * rows of the items it leaves to JavaScript, and of every item where it was not built.
 */

/**
 * COPY's binary format around the native reader's binary rows (PostgreSQL's docs, "COPY",
 * Binary Format): the signature, no flags, no header extension; and a field count of -1 to end.
 * PostgreSQL reads those rows with ~0.79× the work of the same rows as text: 300k rows took
 * 2.80 s against 3.73 s, and 2.98 against 3.77 (bench/copy-formats.ts, medians of 7 alternating
 * rounds; bench/RESULTS.md, "2026-11-27, evening").
 */
export const BINARY_COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
export const BINARY_COPY_HEADER = Buffer.concat([BINARY_COPY_SIGNATURE, Buffer.alloc(8)]);
export const BINARY_COPY_TRAILER = Buffer.from([0xff, 0xff]);

/** The columns of a row, in order. */
export const COPY_ROW_COLUMNS = 'price_list_id, seq, offer_id, name, price, old_price, currency, available, quantity, url, extra, quote_free';

/** A batch's bytes are first given room for this many bytes an item (a rich item's row is ~1 KB), and twice as much when that runs out. */
const BYTES_PER_ITEM = 1024;

/**
 * Tab-separated, `\N` for null, backslash escapes for the separators. Each row goes into the
 * batch's buffer as UTF-8 as soon as it is made: the batch as one string (a rope of its rows),
 * flattened and encoded at the end, cost the main thread ~1 µs an item more (bench/RESULTS.md,
 * "2026-11-27, later morning").
 */
export function itemCopyRows(draftId: number, items: readonly SequencedItem[]): Buffer {
  let bytes = Buffer.allocUnsafe(items.length * BYTES_PER_ITEM);
  let length = 0;
  for (const { seq, item } of items) {
    const extra = extraJson(item);
    const row = `${draftId}\t${seq}\t${copyValue(item.offer_id)}\t${copyValue(item.name)}\t${item.price}\t${item.old_price ?? '\\N'}\t`
      + `${copyValue(item.currency)}\t${item.available ? 't' : 'f'}\t${item.quantity ?? '\\N'}\t`
      + `${item.url === null ? '\\N' : copyValue(item.url)}\t${extra === null ? '\\N' : copyJson(extra)}\t${quoteFree(item)}\n`;
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    if (bytes.length - length < row.length * 3) {
      const grown = Buffer.allocUnsafe(Math.max(bytes.length * 2, length + row.length * 3));
      bytes.copy(grown, 0, 0, length);
      bytes = grown;
    }
    length += bytes.write(row, length, 'utf8');
  }
  return bytes.subarray(0, length);
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyValue(text: string): string {
  return COPY_SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : text;
}

/**
 * copyValue of JSON.stringify's text, which holds no raw tab, LF or CR (it writes them `\t`…):
 * only its backslashes are doubled. The general replace, a callback per backslash, was ~4 % of a
 * rich publication's main thread, whose descriptions quote (bench/RESULTS.md, "2026-11-27, later morning").
 */
const copyJson = (json: string): string => (json.includes('\\') ? json.replaceAll('\\', '\\\\') : json);
