/*
 * How the XLSX rows a store builds (sqlite/items.ts, postgres/items.ts) get their numbers page by
 * page: a row's `r` reference is its number, and a page is built apart from the pages before it.
 * Both dialects read a list as a first page of `firstPage` positions, then pages of `perPage`
 * (sqlite/list-pages.ts, postgres/record-pages.ts), count each page's rows with pageIndexSql, and
 * number each page as pageRowNumbers says.
 */

/**
 * The index of the page that holds position `seq` of a list whose first position is `first`: an
 * SQL expression both dialects evaluate the same.
 */
export const pageIndexSql = (seq: string, first: string, firstPage: number, perPage: number): string =>
  `CASE WHEN ${seq} < ${first} + ${firstPage} THEN 0 ELSE 1 + (${seq} - ${first} - ${firstPage}) / ${perPage} END`;

/** How one page numbers its rows: by position (a row's number is `seq - offset`), or counted from `base + 1` on. */
export type PageRowNumbers = { byPosition: true; offset: number } | { byPosition: false; base: number };

/**
 * Each page's numbering, asked for page after page in order: the list's rows are numbered from
 * `firstRow` on, `rowsOfPage` holds each page's rows by page index (a page with none may be
 * missing), and `last` is the list's last position. A page whose every position holds a row
 * numbers them by position; one with gaps counts them.
 */
export function pageRowNumbers(firstRow: number, last: number, rowsOfPage: ReadonlyMap<number, number>): (from: number, to: number) => PageRowNumbers {
  let page = 0;
  let nextRow = firstRow;
  return (from, to) => {
    const rows = rowsOfPage.get(page++) ?? 0;
    const pageFirstRow = nextRow;
    nextRow += rows;
    return rows === Math.min(to, last + 1) - from ? { byPosition: true, offset: from - pageFirstRow } : { byPosition: false, base: pageFirstRow - 1 };
  };
}
