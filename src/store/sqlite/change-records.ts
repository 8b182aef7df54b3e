import { changePages, changeRecordParts, changeRowsQuery, changeRowsSql, pageEndSql, sharedPageEnds } from '../sql/change-rows.js';
import type { ChangeRecords, ChangeRecordSpecs } from '../changes-types.js';
import { pageThreadValue, type PageRunner } from './list-pages.js';
import { nativeRecordsSelect } from './native-records-sql.js';

/*
 * A changes answer's records built by the C aggregates (CONTRACT §11; ChangesRepository.records)
 * from a version's recorded copies, the way a full export's pages are built from price_items
 * (native-records-sql.ts), on the page threads: no row becomes a JavaScript object. Reading both
 * copies of every touched offer into items and printing them twice to compare cost ~11 µs an
 * offer, which took the changes since the version before ÷ the full JSON export from ~30× down
 * to 3–4× once the full export's pages were built in C (bench/figures/changes.ts,
 * bench/RESULTS.md "2026-11-28, early morning").
 */

/**
 * The records of `specs` over the changed and removed offers of version `changesOf`'s copies,
 * each in offer_id order; null where no aggregate builds a spec, or one reads `extra`.
 */
export function changeRecordPages(runner: PageRunner, changesOf: number, specs: ChangeRecordSpecs, onlyAvailable: boolean): ChangeRecords | null {
  const pageEnd = sharedPageEnds((after) => pageThreadValue<string | null>(runner, pageEndSql('@list', '@after'), { list: changesOf, after }));
  // As a full export's pages (listPages): one a thread, and one ready when the next is taken.
  const ahead = runner.workers ? runner.workers.size + 1 : 1;
  return changeRecordParts(specs, (spec, which) => {
    const select = nativeRecordsSelect(spec);
    const rows = select && changeRowsQuery(select.columns, which, onlyAvailable);
    if (!select || !rows) return null;
    return changePages(
      pageEnd,
      (after, upto) =>
        pageThreadValue<Uint8Array | null>(
          runner,
          `SELECT ${select.expression} FROM (${changeRowsSql(rows, '@list', '@after', upto === null ? null : '@upto')})`,
          { ...select.params, list: changesOf, after, ...(upto === null ? {} : { upto }) },
        ),
      ahead,
    );
  });
}
