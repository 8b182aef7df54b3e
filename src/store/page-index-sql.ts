/**
 * The index of the page that holds position `seq` of a list whose first position is `first`,
 * when a list is read as a first page of `firstPage` positions and then pages of `perPage`
 * (sqlite/list-pages.ts, postgres/record-pages.ts): an SQL expression both dialects evaluate the
 * same, for counting a list's rows page by page (the XLSX rows' numbers).
 */
export const pageIndexSql = (seq: string, first: string, firstPage: number, perPage: number): string =>
  `CASE WHEN ${seq} < ${first} + ${firstPage} THEN 0 ELSE 1 + (${seq} - ${first} - ${firstPage}) / ${perPage} END`;
