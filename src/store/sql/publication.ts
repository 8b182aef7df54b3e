import { STALE_DRAFT_MS, SUPERSEDED_GRACE_MS } from '../item-row.js';
import type { DuplicateOffer, PriceListRecord, PublicationDraft, PublicationSummary, SequencedItem } from '../types.js';
import type { SqlDialect, Steps } from './dialect.js';
import type { RowMappers } from './rows.js';

/*
 * The publication state machine, for both dialects: a draft no reader sees, then one
 * transaction that makes it the store's latest list. The draft may be gone by then: a
 * publication slower than STALE_DRAFT_MS looks like a crashed one to the next
 * beginPublication, which removes it. Such a commit is refused and changes nothing.
 */

/** Removes lists and their items in one transaction. */
export function dropPriceLists(d: SqlDialect, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return Promise.resolve();
  return d.transaction((function* () {
    yield { sql: `DELETE FROM price_items WHERE ${d.anyId('price_list_id')}`, params: [d.ids(ids)] };
    yield { sql: `DELETE FROM price_lists WHERE ${d.anyId('id')}`, params: [d.ids(ids)] };
  })());
}

/** Removes the store's drafts left stale by a crash, then opens a new one. */
export async function beginPublication(d: SqlDialect, map: RowMappers, storeId: string): Promise<PublicationDraft> {
  const { rows: stale } = await d.query({
    sql: `SELECT id FROM price_lists WHERE store_id = ? AND status = 'draft' AND created_at < ${d.ago(STALE_DRAFT_MS)}`,
    params: [storeId],
  });
  await dropPriceLists(d, stale.map((r) => Number(r.id)));
  const { rows } = await d.query({
    sql: `INSERT INTO price_lists (store_id, status, created_at) VALUES (?, 'draft', ${d.now}) RETURNING id`,
    params: [storeId],
  });
  return new SqlDraft(d, map, storeId, Number(rows[0].id));
}

/** The refusal when the draft no longer exists. */
export class DraftGoneError extends Error {
  constructor(draftId: number) {
    super(`publication draft ${draftId} no longer exists (removed as stale?)`);
    this.name = 'DraftGoneError';
  }
}

class SqlDraft implements PublicationDraft {
  constructor(
    private readonly d: SqlDialect,
    private readonly map: RowMappers,
    private readonly storeId: string,
    private readonly draftId: number,
  ) {}

  append(items: readonly SequencedItem[]): Promise<DuplicateOffer[]> {
    return this.d.items.append(this.draftId, items);
  }

  async commit(summary: PublicationSummary): Promise<PriceListRecord> {
    const { record, expired } = await this.d.transaction(this.commitSteps(summary));
    // A new latest list: remembered key look-ups name the old one.
    this.d.keyLookups?.invalidate();
    await dropPriceLists(this.d, expired);
    return record;
  }

  abort(): Promise<void> {
    return dropPriceLists(this.d, [this.draftId]);
  }

  private *commitSteps(summary: PublicationSummary): Steps<{ record: PriceListRecord; expired: number[] }> {
    const { d, storeId, draftId } = this;
    // The store row's lock serializes publications of one store (SQLite: the write lock). The
    // time is read after it, so a later version never gets an earlier published_at
    // (Last-Modified would go back). Nothing changes unless the draft still exists.
    const bumped = yield {
      sql: `UPDATE stores SET last_version = last_version + 1, latest_price_list_id = ?
             WHERE id = ? AND EXISTS (SELECT 1 FROM price_lists WHERE id = ? AND status = 'draft')
            RETURNING last_version, ${d.now} AS now`,
      params: [draftId, storeId, draftId],
    };
    if (bumped.changes !== 1) throw new DraftGoneError(draftId);
    const { last_version: version, now } = bumped.rows[0];
    const categoryIds = yield* d.ensureCategories(storeId, summary.category_paths);
    const published = yield {
      sql: `UPDATE price_lists SET status = 'published', version = ?, published_at = ?, item_count = ?, available_count = ?,
                   currencies = ?, category_ids = ?
             WHERE id = ? AND status = 'draft' RETURNING *`,
      params: [version, now, summary.item_count, summary.available_count, JSON.stringify(summary.currencies), JSON.stringify(categoryIds), draftId],
    };
    // The one-row check that keeps "latest" from pointing at a removed list (a throw rolls back).
    if (published.changes !== 1) throw new DraftGoneError(draftId);
    yield {
      sql: "UPDATE price_lists SET superseded_at = ? WHERE store_id = ? AND status = 'published' AND superseded_at IS NULL AND id <> ?",
      params: [now, storeId, draftId],
    };
    const old = yield {
      sql: `SELECT id FROM price_lists WHERE store_id = ? AND status = 'published' AND superseded_at < ${d.ago(SUPERSEDED_GRACE_MS)}`,
      params: [storeId],
    };
    return { record: this.map.priceList(published.rows[0]), expired: old.rows.map((r) => Number(r.id)) };
  }
}
