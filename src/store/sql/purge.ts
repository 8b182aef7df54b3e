import { inBackground, type SqlDialect, type Steps } from './dialect.js';

/*
 * How lists leave the database (red-team findings #20.4 and #20.7). The list's row goes first,
 * in a transaction that queues its rows for deletion (purged_lists): from that moment no reader
 * can be handed the list, and a reader that is already reading it learns, by asking whether its
 * list still exists (PriceListRepository.exists) when it has read its last page, that rows may
 * have gone under it, and fails instead of ending early with a success. The rows then go in
 * small batches, each a short write, on SQLite on the write thread so the event loop never
 * waits on them; a crash midway leaves the queue entry, and the next purge finishes it.
 */

/** Items deleted per statement: each batch is a short write. */
export const PURGE_BATCH = 20_000;

/**
 * The statements that forget lists: their quarantine entries and rows, and queue their items
 * (`owners`: the lists whose item rows no remaining list serves) for `purgeQueuedRows`.
 */
export function* forgetLists(d: SqlDialect, ids: readonly number[], owners: readonly number[]): Steps<void> {
  if (ids.length > 0) {
    yield { sql: `DELETE FROM quarantined_items WHERE ${d.anyId('price_list_id')}`, params: [d.ids(ids)] };
    yield { sql: `DELETE FROM price_list_changes WHERE ${d.anyId('price_list_id')}`, params: [d.ids(ids)] };
    yield { sql: `DELETE FROM price_lists WHERE ${d.anyId('id')}`, params: [d.ids(ids)] };
  }
  for (const owner of owners) {
    yield { sql: 'INSERT INTO purged_lists (list_id) VALUES (?) ON CONFLICT (list_id) DO NOTHING', params: [owner] };
  }
}

/** Deletes the queued lists' item rows in batches, off the event loop where the dialect can. */
export async function purgeQueuedRows(d: SqlDialect): Promise<void> {
  const { rows } = await d.query({ sql: 'SELECT list_id FROM purged_lists ORDER BY list_id', params: [] });
  for (const row of rows) {
    const listId = Number(row.list_id);
    for (;;) {
      const { changes } = await inBackground(d, {
        sql: 'DELETE FROM price_items WHERE price_list_id = ? AND seq IN (SELECT seq FROM price_items WHERE price_list_id = ? ORDER BY seq LIMIT ?)',
        params: [listId, listId, PURGE_BATCH],
      });
      if (changes === 0) break;
    }
    await inBackground(d, { sql: 'DELETE FROM purged_lists WHERE list_id = ?', params: [listId] });
  }
}
