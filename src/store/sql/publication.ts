import { DEFAULT_HISTORY_VERSIONS } from '../../model/versions.js';
import { STALE_DRAFT_MS } from '../item-row.js';
import type { DuplicateOffer, ItemRowReader, ItemRows, PriceListRecord, PublicationDraft, PublicationSummary, SequencedItem } from '../types.js';
import type { SqlDialect, Steps } from './dialect.js';
import { publicationEvent, type DiffCounts } from '../../model/webhook-events.js';
import { enqueueSteps } from './outbox.js';
import { forgetLists, purgeQueuedRows } from './purge.js';
import type { RowMappers } from './rows.js';
import { applyQuarantine, makeLatest } from './versions.js';
import type { CommitOutcome } from '../versions-types.js';

/*
 * The publication state machine, for both dialects: a draft no reader sees, then one
 * transaction that makes it the store's latest list. The draft may be gone by then: a
 * publication slower than STALE_DRAFT_MS looks like a crashed one to the next
 * beginPublication, which removes it. Such a commit is refused and changes nothing.
 */

/** Removes lists (drafts: no other list serves their rows), then their items in batches (purge.ts). */
export async function dropPriceLists(d: SqlDialect, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await d.transaction(forgetLists(d, ids, ids));
  await purgeQueuedRows(d);
}

/**
 * Removes the drafts left stale by a crash: every store's on a timer (serve's maintenance, so a
 * killed publication's rows do not wait for the store's next publication, red-team #20.19), or
 * one store's when it begins a publication.
 */
export async function sweepStaleDrafts(d: SqlDialect, storeId?: string): Promise<number> {
  const { rows: stale } = await d.query({
    sql: `SELECT id FROM price_lists WHERE status = 'draft' AND created_at < ${d.ago(STALE_DRAFT_MS)}${storeId === undefined ? '' : ' AND store_id = ?'}`,
    params: storeId === undefined ? [] : [storeId],
  });
  await dropPriceLists(d, stale.map((r) => Number(r.id)));
  return stale.length;
}

/** Removes the store's drafts left stale by a crash, then opens a new one. */
export async function beginPublication(d: SqlDialect, map: RowMappers, storeId: string): Promise<PublicationDraft> {
  await sweepStaleDrafts(d, storeId);
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

  get id(): number {
    return this.draftId;
  }

  append(items: readonly SequencedItem[], rows?: readonly ItemRows[]): Promise<DuplicateOffer[]> {
    return this.d.items.append(this.draftId, items, rows);
  }

  get rowReader(): ItemRowReader | null {
    return this.d.items.rowReader?.(this.draftId) ?? null;
  }

  async appended(): Promise<void> {
    await this.d.items.settle?.(this.draftId);
  }

  async commit(summary: PublicationSummary, outcome?: CommitOutcome): Promise<PriceListRecord> {
    await this.appended();
    const record = await this.d.transaction(this.commitSteps(summary, outcome));
    // Every instance on the host warms the new list and sends its webhooks (a held one's too).
    this.d.announce?.();
    // A new latest list: the store's remembered key look-ups name the old one.
    this.d.keyLookups?.invalidate(this.storeId);
    return record;
  }

  async abort(): Promise<void> {
    // Rows still being appended would land after the drop, in no list: settled first, lost or not.
    await this.appended().catch(() => undefined);
    await dropPriceLists(this.d, [this.draftId]);
  }

  private *commitSteps(summary: PublicationSummary, outcome?: CommitOutcome): Steps<PriceListRecord> {
    const { d, storeId, draftId } = this;
    // The store row's lock serializes publications of one store (SQLite: the write lock). The
    // time is read after it, so a later version never gets an earlier published_at
    // (Last-Modified would go back). Nothing changes unless the draft still exists.
    const bumped = yield {
      sql: `UPDATE stores SET last_version = last_version + 1
             WHERE id = ? AND EXISTS (SELECT 1 FROM price_lists WHERE id = ? AND status = 'draft')
            RETURNING last_version, ${d.now} AS now`,
      params: [storeId, draftId],
    };
    if (bumped.changes !== 1) throw new DraftGoneError(draftId);
    const { last_version: version, now } = bumped.rows[0];
    let categoryIds = yield* d.ensureCategories(storeId, summary.category_paths);
    let counts: Pick<PublicationSummary, 'item_count' | 'available_count' | 'currencies'> = summary;
    if (outcome?.quarantine) {
      // CONTRACT §10: items the guard quarantines are served with their previous values.
      const served = yield* applyQuarantine(d, storeId, draftId, outcome.quarantine);
      counts = served;
      categoryIds = [...new Set([...categoryIds, ...served.category_ids])];
    }
    const published = yield {
      sql: `UPDATE price_lists SET status = 'published', version = ?, published_at = ?, item_count = ?, available_count = ?,
                   currencies = ?, category_ids = ?, held = ?, diff = ?
             WHERE id = ? AND status = 'draft' RETURNING *`,
      params: [version, now, counts.item_count, counts.available_count, JSON.stringify(counts.currencies), JSON.stringify(categoryIds),
        outcome?.hold ? 1 : 0, outcome?.diff ?? null, draftId],
    };
    // The one-row check that keeps "latest" from pointing at a removed list (a throw rolls back).
    if (published.changes !== 1) throw new DraftGoneError(draftId);
    // CONTRACT §13: each event is committed with the publication, or not at all (outbox.ts).
    const at = d.time(now);
    const diffCounts = outcome ? (JSON.parse(outcome.diff) as DiffCounts) : null;
    // A held version is stored but not served: the latest stays.
    if (outcome?.hold) {
      yield* enqueueSteps(d, publicationEvent('publication.held', storeId, Number(version), at, diffCounts));
      return this.map.priceList(published.rows[0]);
    }
    yield* enqueueSteps(d, publicationEvent('price_list.published', storeId, Number(version), at, diffCounts));
    if (outcome?.quarantine) yield* enqueueSteps(d, publicationEvent('publication.quarantined', storeId, Number(version), at, diffCounts));
    yield {
      sql: "UPDATE price_lists SET superseded_at = ? WHERE store_id = ? AND status = 'published' AND superseded_at IS NULL AND id <> ?",
      params: [now, storeId, draftId],
    };
    // Older versions leave retention here; their rows are deleted by a sweep after the grace period.
    yield* makeLatest(d, storeId, draftId, outcome?.keepVersions ?? DEFAULT_HISTORY_VERSIONS);
    return this.map.priceList(published.rows[0]);
  }
}
