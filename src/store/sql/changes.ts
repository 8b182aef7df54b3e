import { ITEM_COLUMNS, itemFromRow } from '../item-row.js';
import type { ChangeCandidate, ChangeRecords, ChangeRecordSpecs, ChangeSpan, ChangesRepository } from '../changes-types.js';
import { canBuildRecords } from '../stored-fields.js';
import type { Row, SqlDialect, Steps } from './dialect.js';

/*
 * CONTRACT §11, the changes feed, for both dialects. Each version records once the offers whose
 * served row differs in any stored field from the latest it replaces (added, changed or
 * removed), with copies of both rows: `price_list_changes` (docs/changes-design.md).
 * The latest versions follow one another in increasing numbers (makeLatest discards held
 * versions older than a new latest), so what differs between the rows at N and at M is among
 * the recorded offers of the versions in (N, M]; a changes request reads only those, with the
 * rows at N and at M, and never the whole list.
 */

/** A published version in retention (versions.ts's KEPT) that has been latest. */
const KEPT_SERVED = "status = 'published' AND retired_at IS NULL AND held = 0";

/** Columns compared: every stored field of an item (quote_free is derived from them). */
const NOT_NULL_FIELDS = ['name', 'price', 'currency', 'available'];
const NULLABLE_FIELDS = ['old_price', 'quantity', 'url', 'extra'];
const DIFFERS = [
  ...NOT_NULL_FIELDS.map((c) => `n.${c} <> o.${c}`),
  ...NULLABLE_FIELDS.map((c) => `n.${c} IS DISTINCT FROM o.${c}`),
].join(' OR ');

/**
 * In a change's transaction, before `listId` becomes the store's latest: makes sure its changes
 * against the latest it replaces are recorded. A publication recorded them at the guard's
 * comparison (changes_base names the list compared with); a rollback, a release, or a
 * publication that another one overtook since its comparison records them here, in one pass
 * over each list by its (price_list_id, offer_id) index. A store's first list records none:
 * no changes request can reach back before it.
 */
export function* recordChanges(d: SqlDialect, storeId: string, listId: number): Steps<void> {
  const { rows } = yield {
    sql: `SELECT (SELECT COALESCE(items_of, id) FROM price_lists WHERE id = ?) AS fresh, (SELECT changes_base FROM price_lists WHERE id = ?) AS base,
                 (SELECT COALESCE(p.items_of, p.id) FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = ?) AS previous`,
    params: [listId, listId, storeId],
  };
  const fresh = Number(rows[0].fresh);
  const previous = rows[0].previous === null ? null : Number(rows[0].previous);
  if (previous !== null && Number(rows[0].base) !== previous) {
    yield { sql: 'DELETE FROM price_list_changes WHERE price_list_id = ?', params: [listId] };
    if (fresh !== previous) {
      const { addedOrChanged, removed } = recordingStatements(d);
      for (const sql of removed === null ? [addedOrChanged] : [addedOrChanged, removed]) yield { sql, params: [listId, previous, fresh] };
    }
  }
  yield { sql: 'UPDATE price_lists SET changes_known = 1, changes_base = ? WHERE id = ?', params: [previous, listId] };
}

/** The stored fields of an item, as price_items holds them (and price_list_changes copies them, new_… and old_…). */
const FIELDS = ['name', 'price', 'old_price', 'currency', 'available', 'quantity', 'url', 'extra'];
const COPIES = ['new_seq', 'old_seq', ...FIELDS.map((f) => `new_${f}`), ...FIELDS.map((f) => `old_${f}`)].join(', ');
const copiesOf = (n: string, o: string) => [`${n}.seq`, `${o}.seq`, ...FIELDS.map((f) => `${n}.${f}`), ...FIELDS.map((f) => `${o}.${f}`)].join(', ');

/** Params of every recording statement: the version's list id, the items compared with, the version's items. */
const ADDED_OR_CHANGED = `INSERT INTO price_list_changes (price_list_id, offer_id, ${COPIES})
   SELECT CAST(? AS bigint), n.offer_id, ${copiesOf('n', 'o')} FROM price_items n LEFT JOIN price_items o ON o.price_list_id = ? AND o.offer_id = n.offer_id
    WHERE n.price_list_id = ? AND (o.offer_id IS NULL OR ${DIFFERS})`;
const REMOVED = `INSERT INTO price_list_changes (price_list_id, offer_id, ${COPIES})
   SELECT CAST(? AS bigint), o.offer_id, ${copiesOf('n', 'o').split(', ').map((c) => (c.startsWith('n.') ? 'NULL' : c)).join(', ')} FROM price_items o
    WHERE o.price_list_id = ? AND NOT EXISTS (SELECT 1 FROM price_items n WHERE n.price_list_id = ? AND n.offer_id = o.offer_id)`;
const ALL_CHANGES = `INSERT INTO price_list_changes (price_list_id, offer_id, ${COPIES})
   SELECT CAST(? AS bigint), COALESCE(n.offer_id, o.offer_id), ${copiesOf('n', 'o')}
     FROM (SELECT * FROM price_items WHERE price_list_id = ?) o FULL JOIN (SELECT * FROM price_items WHERE price_list_id = ?) n ON n.offer_id = o.offer_id
    WHERE n.offer_id IS NULL OR o.offer_id IS NULL OR ${DIFFERS}`;

/**
 * In the commit's transaction, after the quarantine rewrote some of the draft's rows (previous
 * values, or left out): the recorded copies of those rows follow.
 */
export function* refreshQuarantinedCopies(draftId: number): Steps<void> {
  yield {
    sql: `UPDATE price_list_changes SET (new_seq, ${FIELDS.map((f) => `new_${f}`).join(', ')}) =
            (SELECT n.seq, ${FIELDS.map((f) => `n.${f}`).join(', ')} FROM price_items n WHERE n.price_list_id = ? AND n.offer_id = price_list_changes.offer_id)
           WHERE price_list_id = ? AND offer_id IN (SELECT offer_id FROM quarantined_items WHERE price_list_id = ?)`,
    params: [draftId, draftId, draftId],
  };
}

/**
 * The statements that record a version's changes. SQLite joins by index look-ups, one pass per
 * statement: the added and changed offers, then the removed ones (run only when some are
 * missing). PostgreSQL hashes both lists once in a full join, which finds all three at the cost
 * the guard's one-join count had (bench/figures/changes.ts measured two statements at 2× it).
 */
export function recordingStatements(d: Pick<SqlDialect, 'name'>): { addedOrChanged: string; removed: string | null } {
  return d.name === 'postgres' ? { addedOrChanged: ALL_CHANGES, removed: null } : { addedOrChanged: ADDED_OR_CHANGED, removed: REMOVED };
}

/** Offers read per statement. */
export const CHANGES_PAGE = 2_000;

const columnsOf = (alias: string) => ITEM_COLUMNS.split(', ').map((c) => `${alias}.${c} AS ${alias}_${c}`).join(', ');
const COLUMN_NAMES = ITEM_COLUMNS.split(', ');

export class SqlChangesRepository implements ChangesRepository {
  constructor(private readonly d: SqlDialect) {}

  async span(storeId: string, since: number, latest: number): Promise<ChangeSpan | null> {
    const { rows } = await this.d.query({
      sql: `SELECT id, version, changes_known, changes_base FROM price_lists WHERE store_id = ? AND ${KEPT_SERVED} AND version >= ? AND version <= ? ORDER BY version DESC`,
      params: [storeId, since, latest],
      request: true,
    });
    const at = rows.find((r) => Number(r.version) === since);
    // The rows at `since` are gone, or a version in between never recorded its changes.
    if (!at || rows.some((r) => Number(r.version) > since && Number(r.changes_known) !== 1)) return null;
    return {
      since,
      latest,
      versions: rows.filter((r) => Number(r.version) > since).map((r) => ({ id: Number(r.id), version: Number(r.version), base: r.changes_base === null ? null : Number(r.changes_base) })),
    };
  }

  async *candidates(storeId: string, span: ChangeSpan, before: number, after: number): AsyncGenerator<ChangeCandidate[]> {
    // Since the version before the latest (the common case), the recorded copies are both rows:
    // the answer reads price_list_changes alone, in order. Across several versions an offer's
    // rows are looked up at both ends by offer_id; each page picks its offers first, so however
    // stale the planner's statistics after a large publication, only a page's offers are joined.
    const fromRecords = readsCopiesAlone(span, before);
    // Newest version first; an offer recorded by a later version of the span was given there.
    for (const version of span.versions) {
      let from = '';
      for (;;) {
        const { rows } = await this.d.query(fromRecords
          ? {
            sql: `SELECT offer_id, ${COPIES} FROM price_list_changes WHERE price_list_id = ? AND offer_id > ? ORDER BY offer_id LIMIT ?`,
            params: [version.id, from, CHANGES_PAGE],
            request: true,
          }
          : {
            sql: `SELECT c.offer_id, ${columnsOf('m')}, ${columnsOf('o')}
                    FROM (SELECT r.offer_id FROM price_list_changes r
                           WHERE r.price_list_id = ? AND r.offer_id > ?
                             AND NOT EXISTS (SELECT 1 FROM price_list_changes l
                                              WHERE l.offer_id = r.offer_id AND l.price_list_id IN (
                                                SELECT id FROM price_lists WHERE store_id = ? AND ${KEPT_SERVED} AND version > ? AND version <= ?))
                           ORDER BY r.offer_id LIMIT ?) c
                    LEFT JOIN price_items m ON m.price_list_id = ? AND m.offer_id = c.offer_id
                    LEFT JOIN price_items o ON o.price_list_id = ? AND o.offer_id = c.offer_id
                   ORDER BY c.offer_id`,
            params: [version.id, from, storeId, version.version, span.latest, CHANGES_PAGE, after, before],
            request: true,
          });
        if (rows.length === 0) break;
        yield rows.map((r) => (fromRecords ? fromCopies(r) : {
          offer_id: r.offer_id as string,
          after: r.m_offer_id === null ? null : itemFromRow(COLUMN_NAMES.map((c) => r[`m_${c}`])),
          before: r.o_offer_id === null ? null : itemFromRow(COLUMN_NAMES.map((c) => r[`o_${c}`])),
        }));
        if (rows.length < CHANGES_PAGE) break;
        from = rows[rows.length - 1].offer_id as string;
      }
    }
  }

  records(span: ChangeSpan, before: number, specs: ChangeRecordSpecs, onlyAvailable: boolean): ChangeRecords | null {
    const { items } = this.d;
    if (!items.changeRecords || !readsCopiesAlone(span, before) || !canBuildRecords(specs.changed) || !canBuildRecords(specs.removed)) return null;
    return items.changeRecords(span.versions[0].id, specs, onlyAvailable);
  }
}

/** Whether the span's offers and both their rows are the recorded copies of its one version, recorded against `before`. */
const readsCopiesAlone = (span: ChangeSpan, before: number): boolean => span.versions.length === 1 && span.versions[0].base === before;

/** A recorded offer's two rows from its copies (a null seq: not there). */
function fromCopies(r: Row): ChangeCandidate {
  const offerId = r.offer_id as string;
  const row = (side: 'new' | 'old') => (r[`${side}_seq`] === null ? null : itemFromRow([offerId, ...FIELDS.map((f) => r[`${side}_${f}`])]));
  return { offer_id: offerId, after: row('new'), before: row('old') };
}
