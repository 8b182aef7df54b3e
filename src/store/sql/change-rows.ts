import type { RecordSpec } from '../../model/record-spec.js';
import type { ChangeRecords, ChangeRecordSpecs } from '../changes-types.js';
import { STORED_FIELDS } from '../stored-fields.js';

/*
 * Which recorded copies of a version (price_list_changes) a changes answer prints, as one SQL
 * both dialects run under their C record builders (sqlite/change-records.ts, postgres/items.ts):
 * the rows come out as price_items' columns, one side's copy, in offer_id order, with a NULL
 * `seq` (the builders check no order then). What it keeps is what domain/changes.ts
 * changeEntries keeps from the same copies, so both paths print the same answer
 * (store/change-records.contract.test.ts).
 */

/** The copied fields, as price_list_changes names them after `new_` and `old_`. */
const COPIED_FIELDS = STORED_FIELDS.filter((field) => field !== 'offer_id');

/** Touched offers per page: ~2,000 changed JSON items are ~340 KiB; pages of 1,000–10,000 measured alike, and one page runs on one thread. */
export const CHANGE_RECORDS_PER_PAGE = 2_000;

export interface ChangeRowsQuery {
  /** The fields the records print, besides offer_id: a difference in one of them (or in the price) is a change. */
  printed: readonly string[];
  which: 'changed' | 'removed';
  onlyAvailable: boolean;
}

/**
 * The query of one part whose records read these columns (seq aside); null when they read
 * `extra` (YML), whose keys the copies cannot compare one by one.
 */
export function changeRowsQuery(read: readonly string[], which: 'changed' | 'removed', onlyAvailable: boolean): ChangeRowsQuery | null {
  const printed = read.filter((column) => column !== 'seq');
  return printed.includes('extra') ? null : { printed, which, onlyAvailable };
}

/** Both parts of an answer as `part` builds each; null when it builds either not. */
export function changeRecordParts(specs: ChangeRecordSpecs, part: (spec: RecordSpec, which: 'changed' | 'removed') => AsyncIterable<Uint8Array> | null): ChangeRecords | null {
  const changed = part(specs.changed, 'changed');
  const removed = part(specs.removed, 'removed');
  return changed && removed && { changed, removed };
}

/**
 * Before every offer_id: the first page's `after` (item-validation.ts refuses an empty offer_id,
 * so "> ''" keeps them all). The first page then takes the statement of the pages after it
 * (SQLite prepares each text once per page thread).
 */
export const FIRST_AFTER = '';

/**
 * The rows of one page: the offers of `list` (an SQL expression of the version's id) after
 * `after` and up to `upto` (SQL expressions of offer_ids; null: the last page). Both bounds
 * are the key's range: a bound the index cannot take would read the rest of the list each page.
 */
export function changeRowsSql(query: ChangeRowsQuery, list: string, after: string, upto: string | null): string {
  const { printed, which, onlyAvailable } = query;
  // `available` is a boolean in PostgreSQL and 0 or 1 in SQLite: a condition as it is in both.
  const present = (side: 'new' | 'old') => `${side}_seq IS NOT NULL${onlyAvailable ? ` AND ${side}_available` : ''}`;
  const absent = (side: 'new' | 'old') => `(${side}_seq IS NULL${onlyAvailable ? ` OR NOT ${side}_available` : ''})`;
  // As sameShown judges it (formats/changes/text-changes-writer.ts printsAlike): the price, and every field the record prints.
  const compared = new Set(['price', ...printed.filter((field) => field !== 'offer_id')]);
  const differs = [...compared].map((field) => `new_${field} IS DISTINCT FROM old_${field}`).join(' OR ');
  const kept = which === 'changed' ? `${present('new')} AND (${absent('old')} OR ${differs})` : `${present('old')} AND ${absent('new')}`;
  const side = which === 'changed' ? 'new' : 'old';
  // No seq: the builders then take the rows in the order given, offer_id's, the key's own (a
  // rank by row_number() to check it cost 15 ms of SQLite's 16 for 9,000 changed items).
  return `SELECT CAST(NULL AS bigint) AS seq, offer_id, ${COPIED_FIELDS.map((field) => `${side}_${field} AS ${field}`).join(', ')}
            FROM price_list_changes
           WHERE price_list_id = ${list} AND offer_id > ${after} ${upto === null ? '' : `AND offer_id <= ${upto}`} AND ${kept}
           ORDER BY offer_id`;
}

/** The last offer_id of the page after `after` (an SQL expression), or no row when the rest is one page. */
export const pageEndSql = (list: string, after: string): string =>
  `SELECT offer_id FROM price_list_changes WHERE price_list_id = ${list} AND offer_id > ${after} ORDER BY offer_id LIMIT 1 OFFSET ${CHANGE_RECORDS_PER_PAGE - 1}`;

/** The end of the page after `after` (an offer_id), or null when the rest is one page. */
export type PageEnd = (after: string) => Promise<string | null>;

/**
 * `find` remembered: an answer's changed and removed offers are read along the same touched
 * offers, so its second part takes the first part's page ends instead of seeking them again.
 */
export function sharedPageEnds(find: PageEnd): PageEnd {
  const ends = new Map<string, Promise<string | null>>();
  return (after) => {
    let end = ends.get(after);
    if (end === undefined) {
      end = find(after);
      ends.set(after, end);
      // Thrown to the part that awaits it; not unhandled meanwhile.
      end.catch(() => undefined);
    }
    return end;
  };
}

/**
 * The pages `readPage` reads between the page ends `pageEnd` finds, in offer_id order, `ahead`
 * of them being read at once: each page is asked for as soon as its end is known, the ends
 * one after another (a skip along the key, well under a page's work).
 */
export async function* changePages(
  pageEnd: PageEnd,
  readPage: (after: string, upto: string | null) => Promise<Uint8Array | null>,
  ahead: number,
): AsyncGenerator<Uint8Array> {
  const inFlight: Promise<Uint8Array | null>[] = [];
  let after = FIRST_AFTER;
  let end: Promise<string | null> | null = pageEnd(after);
  for (;;) {
    while (end !== null && inFlight.length < ahead) {
      const upto: string | null = await end;
      const page = readPage(after, upto);
      // Failures are thrown in turn; not unhandled meanwhile.
      page.catch(() => undefined);
      inFlight.push(page);
      if (upto === null) {
        end = null;
      } else {
        after = upto;
        end = pageEnd(upto);
      }
    }
    const page = inFlight.shift();
    if (!page) return;
    const records = await page;
    if (records !== null && records.length > 0) yield records;
  }
}
