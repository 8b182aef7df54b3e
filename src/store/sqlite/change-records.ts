import type { RecordSpec } from '../../model/record-spec.js';
import { changePages, changeRowsSql, pageEndSql } from '../sql/change-rows.js';
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
 * The records of `spec` over the `changed` or `removed` offers of version `changesOf`'s copies,
 * in offer_id order; null where no aggregate builds the spec, or where it reads `extra` (YML),
 * whose keys the copies cannot compare one by one.
 */
export function changeRecordPages(runner: PageRunner, changesOf: number, spec: RecordSpec, which: 'changed' | 'removed', onlyAvailable: boolean): AsyncIterable<Uint8Array> | null {
  const select = nativeRecordsSelect(spec);
  if (select === null || select.columns.includes('extra')) return null;
  const rows = { dialect: 'sqlite', printed: select.columns, which, onlyAvailable } as const;
  const bound = (after: string | null) => (after === null ? {} : { after });
  return changePages(
    (after) => pageThreadValue<string | null>(runner, pageEndSql('@list', after === null ? null : '@after'), { list: changesOf, ...bound(after) }),
    (after, upto) =>
      pageThreadValue<Uint8Array | null>(
        runner,
        `SELECT ${select.expression} FROM (${changeRowsSql(rows, '@list', after === null ? null : '@after', upto === null ? null : '@upto')})`,
        { ...select.params, list: changesOf, ...bound(after), ...(upto === null ? {} : { upto }) },
      ),
    // As a full export's pages (listPages): one a thread, and one ready when the next is taken.
    runner.workers ? runner.workers.size + 1 : 1,
  );
}
