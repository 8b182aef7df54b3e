import type Database from 'better-sqlite3';
import type { GuardPolicy, VersionSource } from '../../model/versions.js';
import { SUPERSEDED_GRACE_MS } from '../item-row.js';
import type { PriceListRecord } from '../types.js';
import type {
  ItemCheck, ItemThresholds, ListCounts, QuarantinedItem, RawOffender, VersionRow, VersionStore,
} from '../versions-types.js';
import type { PageRunner } from './list-pages.js';

type Row = Record<string, unknown>;

/*
 * CONTRACT §10 on SQLite. The per-item checks are SQL predicates over `n` (the new list's row)
 * LEFT JOIN `o` (the old list's row of the same offer_id), written once here and used by the
 * counts, the offenders and the quarantine. Comparisons run on a page thread (one JSON value
 * each), so a 1M-item diff does not hold up the event loop; writes run on the main connection.
 */

const ZERO = '(@zero = 1 AND n.price = 0 AND (o.offer_id IS NULL OR o.price > 0))';
const DROP = '(n.price > 0 AND o.price > 0 AND (o.price - n.price) * 100 > @drop * o.price)';
const RISE = '(o.price > 0 AND (n.price - o.price) * 100 > @rise * o.price)';
const PREDICATES: Record<Exclude<ItemCheck, 'removed'>, string> = { zero_price: ZERO, price_drop: DROP, price_rise: RISE };
const JOIN_OLD = 'FROM price_items n LEFT JOIN price_items o ON o.price_list_id = @old AND o.offer_id = n.offer_id WHERE n.price_list_id = @new';

const thresholdParams = (t: ItemThresholds) => ({ drop: t.max_price_drop_pct, rise: t.max_price_rise_pct, zero: t.zero_price === 'hold' ? 1 : 0 });

/** Item columns copied between price_items and quarantined_items (both carry quote_free here). */
const ROW_COLUMNS = 'name, price, old_price, currency, available, quantity, url, extra, quote_free';

/** Items deleted per statement when a version is swept: each batch is a short write transaction. */
const SWEEP_BATCH = 20_000;

/** The version columns a PriceListRecord needs, from `price_lists p`. */
export const priceListFromRow = (r: Row): PriceListRecord => ({
  id: Number(r.id), store_id: r.store_id as string, version: Number(r.version), published_at: new Date(Number(r.published_at)),
  item_count: Number(r.item_count), available_count: Number(r.available_count),
  currencies: JSON.parse(r.currencies as string), category_ids: JSON.parse(r.category_ids as string),
  items_list_id: Number(r.items_of ?? r.id),
});

/** A served or held version, not a draft, not out of retention. */
const KEPT = "p.status = 'published' AND p.retired_at IS NULL";

export class SqliteVersions implements VersionStore {
  constructor(
    private readonly db: Database.Database,
    private readonly pages: PageRunner,
    /** A new latest list: remembered key look-ups name the old one. */
    private readonly latestChanged: () => void,
  ) {}

  /** One JSON value computed on a page thread (or here, for an in-memory database). */
  private async readJson<T>(sql: string, params: Record<string, unknown>): Promise<T> {
    const value = this.pages.workers ? await this.pages.workers.run(sql, params) : this.pages.runHere(sql, params);
    return JSON.parse(value as string) as T;
  }

  async getGuard(storeId: string): Promise<GuardPolicy | null> {
    const row = this.db.prepare('SELECT * FROM guard_policies WHERE store_id = ?').get(storeId) as Row | undefined;
    return row ? guardFrom(row) : null;
  }

  async putGuard(storeId: string, policy: GuardPolicy): Promise<void> {
    this.db.prepare(
      `INSERT INTO guard_policies (store_id, max_removed_pct, max_price_drop_pct, max_price_rise_pct, min_items, zero_price, updated_at)
       VALUES (@store, @max_removed_pct, @max_price_drop_pct, @max_price_rise_pct, @min_items, @zero_price, @now)
       ON CONFLICT (store_id) DO UPDATE SET max_removed_pct = excluded.max_removed_pct, max_price_drop_pct = excluded.max_price_drop_pct,
         max_price_rise_pct = excluded.max_price_rise_pct, min_items = excluded.min_items, zero_price = excluded.zero_price, updated_at = excluded.updated_at`,
    ).run({ ...policy, store: storeId, now: Date.now() });
  }

  async compare(newItems: number, oldItems: number | null, thresholds: ItemThresholds): Promise<ListCounts> {
    // One pass over the new list, each row looking up its offer in the old one by the unique index.
    return this.readJson<ListCounts>(
      `SELECT json_object('new_items', count(*), 'matched', count(o.offer_id),
                'price_up', total(o.price < n.price), 'price_down', total(o.price > n.price), 'unchanged', total(o.price = n.price),
                'zero_price', total(${ZERO}), 'price_drop', total(${DROP}), 'price_rise', total(${RISE}))
         ${JOIN_OLD}`,
      { new: newItems, old: oldItems ?? -1, ...thresholdParams(thresholds) },
    );
  }

  async offenders(newItems: number, oldItems: number, check: ItemCheck, thresholds: ItemThresholds, limit: number): Promise<RawOffender[]> {
    const sql = check === 'removed'
      ? `SELECT json_group_array(json_object('offer_id', offer_id, 'old_price', price, 'new_price', NULL)) FROM (
           SELECT o.offer_id, o.price FROM price_items o
            WHERE o.price_list_id = @old AND NOT EXISTS (SELECT 1 FROM price_items n WHERE n.price_list_id = @new AND n.offer_id = o.offer_id)
            ORDER BY o.seq LIMIT @limit)`
      : `SELECT json_group_array(json_object('offer_id', offer_id, 'old_price', old, 'new_price', price)) FROM (
           SELECT n.offer_id, o.price AS old, n.price ${JOIN_OLD} AND ${PREDICATES[check]} ORDER BY n.seq LIMIT @limit)`;
    return this.readJson<RawOffender[]>(sql, { new: newItems, old: oldItems, limit, ...thresholdParams(thresholds) });
  }

  async getVersion(storeId: string, version: number): Promise<VersionRow | null> {
    const row = this.db.prepare(`${VERSION_SELECT} AND p.version = ?`).get(storeId, version) as Row | undefined;
    return row ? versionFrom(row) : null;
  }

  async listVersions(storeId: string): Promise<VersionRow[]> {
    return (this.db.prepare(`${VERSION_SELECT} ORDER BY p.version DESC`).all(storeId) as Row[]).map(versionFrom);
  }

  async setDiff(listId: number, diff: string): Promise<void> {
    this.db.prepare('UPDATE price_lists SET diff = ? WHERE id = ?').run(diff, listId);
  }

  async releaseHeld(storeId: string, version: number, keepVersions: number): Promise<PriceListRecord | null> {
    const released = this.db.transaction(() => {
      const id = this.db.prepare(`SELECT id FROM price_lists p WHERE store_id = ? AND version = ? AND p.held = 1 AND ${KEPT}`).pluck().get(storeId, version) as number | undefined;
      if (id === undefined) return null;
      // Published now: Last-Modified never goes back, and the time is taken under the write lock.
      this.db.prepare('UPDATE price_lists SET held = 0, published_at = ? WHERE id = ?').run(Date.now(), id);
      makeLatest(this.db, storeId, id, keepVersions);
      return id;
    }).immediate();
    return this.finish(released);
  }

  async discardHeld(storeId: string, version: number): Promise<boolean> {
    // Never served, so no reader to wait for: the next sweep deletes it.
    const info = this.db.prepare(`UPDATE price_lists AS p SET retired_at = 0 WHERE store_id = ? AND version = ? AND p.held = 1 AND ${KEPT}`).run(storeId, version);
    return info.changes > 0;
  }

  async rollback(storeId: string, version: number, keepVersions: number): Promise<PriceListRecord | null> {
    const created = this.db.transaction(() => {
      const target = this.db.prepare(`SELECT * FROM price_lists p WHERE store_id = ? AND version = ? AND p.held = 0 AND ${KEPT}`).get(storeId, version) as Row | undefined;
      if (!target) return null;
      const now = Date.now();
      // One row, no items: the new version serves the target's rows (items_of), so its cost does not grow with the list.
      const id = Number(this.db.prepare(
        `INSERT INTO price_lists (store_id, status, version, created_at, published_at, item_count, available_count, currencies, category_ids, source, items_of)
         VALUES (?, 'published', (SELECT last_version + 1 FROM stores WHERE id = ?), ?, ?, ?, ?, ?, ?, 'rollback', ?)`,
      ).run(storeId, storeId, now, now, target.item_count, target.available_count, target.currencies, target.category_ids, target.items_of ?? target.id).lastInsertRowid);
      this.db.prepare('UPDATE stores SET last_version = last_version + 1 WHERE id = ?').run(storeId);
      makeLatest(this.db, storeId, id, keepVersions);
      return id;
    }).immediate();
    return this.finish(created);
  }

  async pendingQuarantine(storeId: string, limit: number): Promise<{ count: number; items: QuarantinedItem[] }> {
    const rows = this.db.prepare(
      `SELECT q.offer_id, q.reason, q.served_price, q.price, count(*) OVER () AS total
         FROM stores s JOIN quarantined_items q ON q.price_list_id = s.latest_price_list_id
        WHERE s.id = ? ORDER BY q.seq LIMIT ?`,
    ).all(storeId, limit) as Row[];
    return {
      count: rows.length === 0 ? 0 : Number(rows[0].total),
      items: rows.map((r) => ({ offer_id: r.offer_id as string, check: r.reason as QuarantinedItem['check'], old_price: r.served_price as number | null, new_price: Number(r.price) })),
    };
  }

  async releaseQuarantine(storeId: string, offers: readonly string[] | null, keepVersions: number): Promise<{ list: PriceListRecord | null; missing: string[] }> {
    const params = { store: storeId, all: offers === null ? 1 : 0, offers: JSON.stringify(offers ?? []) };
    const outcome = this.db.transaction((): { id: number | null; missing: string[] } => {
      const latest = this.db.prepare('SELECT p.* FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = ?').get(storeId) as Row | undefined;
      if (!latest) return { id: null, missing: offers ? [...offers] : [] };
      const q = { ...params, latest: latest.id, items: latest.items_of ?? latest.id };
      const missing = this.db.prepare(
        'SELECT json_group_array(j.value) FROM json_each(@offers) j WHERE j.value NOT IN (SELECT offer_id FROM quarantined_items WHERE price_list_id = @latest)',
      ).pluck().get(q) as string;
      const notQuarantined = JSON.parse(missing) as string[];
      const released = 'q.price_list_id = @latest AND (@all = 1 OR q.offer_id IN (SELECT value FROM json_each(@offers)))';
      const count = this.db.prepare(`SELECT count(*) FROM quarantined_items q WHERE ${released}`).pluck().get(q) as number;
      if (notQuarantined.length > 0 || count === 0) return { id: null, missing: notQuarantined };

      const now = Date.now();
      const id = Number(this.db.prepare("INSERT INTO price_lists (store_id, status, created_at, source) VALUES (@store, 'draft', @now, 'publish')").run({ ...q, now }).lastInsertRowid);
      const v = { ...q, id };
      // By SQL: the served rows but the released ones, then the released ones' new values at their own positions.
      this.db.prepare(
        `INSERT INTO price_items (price_list_id, seq, offer_id, ${ROW_COLUMNS})
         SELECT @id, i.seq, i.offer_id, ${prefixed('i')} FROM price_items i
          WHERE i.price_list_id = @items AND i.offer_id NOT IN (SELECT q.offer_id FROM quarantined_items q WHERE ${released})`,
      ).run(v);
      this.db.prepare(`INSERT INTO price_items (price_list_id, seq, offer_id, ${ROW_COLUMNS}) SELECT @id, q.seq, q.offer_id, ${prefixed('q')} FROM quarantined_items q WHERE ${released}`).run(v);
      this.db.prepare(`DELETE FROM quarantined_items AS q WHERE ${released}`).run(v);
      // What stays quarantined moves with the version that now serves its previous values.
      this.db.prepare('UPDATE quarantined_items SET price_list_id = @id WHERE price_list_id = @latest').run(v);
      const counts = this.db.prepare(
        `SELECT count(*) AS item_count, total(available) AS available_count,
                (SELECT json_group_array(currency) FROM (SELECT DISTINCT currency FROM price_items WHERE price_list_id = @id ORDER BY currency)) AS currencies
           FROM price_items WHERE price_list_id = @id`,
      ).get(v) as Row;
      this.db.prepare(
        `UPDATE price_lists SET status = 'published', version = (SELECT last_version + 1 FROM stores WHERE id = @store), published_at = @now,
                item_count = @item_count, available_count = @available_count, currencies = @currencies, category_ids = @category_ids
          WHERE id = @id`,
      ).run({ ...v, now, item_count: counts.item_count, available_count: counts.available_count, currencies: counts.currencies, category_ids: latest.category_ids });
      this.db.prepare('UPDATE stores SET last_version = last_version + 1 WHERE id = ?').run(storeId);
      makeLatest(this.db, storeId, id, keepVersions);
      return { id, missing: [] };
    }).immediate();
    return { list: await this.finish(outcome.id), missing: outcome.missing };
  }

  async sweep(storeId: string): Promise<void> {
    const due = this.db.prepare(
      "SELECT id, COALESCE(items_of, id) AS owner FROM price_lists WHERE store_id = ? AND status = 'published' AND retired_at < ? ORDER BY id",
    ).all(storeId, Date.now() - SUPERSEDED_GRACE_MS) as { id: number; owner: number }[];
    for (const { id, owner } of due) {
      // The rows stay while any other version serves them (a rollback's items_of).
      const shared = this.db.prepare('SELECT 1 FROM price_lists WHERE id <> @id AND (id = @owner OR items_of = @owner)').get({ id, owner });
      if (!shared) {
        // Small batches, each its own transaction, so readers and writers interleave; the list
        // row goes last, so a crash midway leaves a retired version the next sweep finishes.
        const deleteBatch = this.db.prepare(
          'DELETE FROM price_items WHERE price_list_id = @owner AND seq IN (SELECT seq FROM price_items WHERE price_list_id = @owner ORDER BY seq LIMIT @batch)',
        );
        while (deleteBatch.run({ owner, batch: SWEEP_BATCH }).changes > 0);
      }
      this.db.transaction(() => {
        this.db.prepare('DELETE FROM quarantined_items WHERE price_list_id = ?').run(id);
        this.db.prepare('DELETE FROM price_lists WHERE id = ?').run(id);
      })();
    }
  }

  private async finish(id: number | null): Promise<PriceListRecord | null> {
    if (id === null) return null;
    this.latestChanged();
    return priceListFromRow(this.db.prepare('SELECT * FROM price_lists WHERE id = ?').get(id) as Row);
  }
}

const prefixed = (alias: string) => ROW_COLUMNS.split(', ').map((c) => `${alias}.${c}`).join(', ');

const VERSION_SELECT = `SELECT p.*, p.id = s.latest_price_list_id AS is_latest FROM stores s JOIN price_lists p ON p.store_id = s.id
  WHERE s.id = ? AND ${KEPT}`;

function versionFrom(r: Row): VersionRow {
  return { list: priceListFromRow(r), held: r.held === 1, latest: r.is_latest === 1, source: r.source as VersionSource, diff: (r.diff as string | null) ?? null };
}

function guardFrom(r: Row): GuardPolicy {
  return {
    max_removed_pct: Number(r.max_removed_pct), max_price_drop_pct: Number(r.max_price_drop_pct), max_price_rise_pct: Number(r.max_price_rise_pct),
    min_items: Number(r.min_items), zero_price: r.zero_price as GuardPolicy['zero_price'],
  };
}

/**
 * Inside a write transaction: `listId` becomes the store's latest; held versions older than it
 * are discarded (a later publication decided for them); published versions beyond the newest
 * `keep` leave retention (retired_at: unserved now, deleted by a sweep after the grace period,
 * so a download in progress still finishes).
 */
export function makeLatest(db: Database.Database, storeId: string, listId: number, keep: number): void {
  const now = Date.now();
  const version = db.prepare('SELECT version FROM price_lists WHERE id = ?').pluck().get(listId) as number;
  db.prepare('UPDATE stores SET latest_price_list_id = ? WHERE id = ?').run(listId, storeId);
  db.prepare(`UPDATE price_lists AS p SET retired_at = 0 WHERE store_id = ? AND p.held = 1 AND version < ? AND ${KEPT}`).run(storeId, version);
  db.prepare(
    `UPDATE price_lists AS p SET retired_at = @now WHERE store_id = @store AND p.held = 0 AND ${KEPT} AND version < (
       SELECT min(version) FROM (SELECT version FROM price_lists p WHERE store_id = @store AND p.held = 0 AND ${KEPT} ORDER BY version DESC LIMIT @keep))`,
  ).run({ now, store: storeId, keep });
}

/**
 * Inside the commit's write transaction: the draft's items that trip `thresholds` against the
 * latest list are quarantined. Their proposed rows are kept in quarantined_items; in the draft
 * they take their previous values, or (a new item) are left out. Returns the draft's summary
 * counts and currencies as they now are, or null when the store has no latest list.
 */
export function applyQuarantine(db: Database.Database, storeId: string, draftId: number, thresholds: ItemThresholds): { item_count: number; available_count: number; currencies: string[]; category_ids: number[] } {
  const latest = db.prepare('SELECT p.id, COALESCE(p.items_of, p.id) AS items, p.category_ids FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = ?').get(storeId) as Row | undefined;
  const params = { new: draftId, old: latest ? Number(latest.items) : -1, ...thresholdParams(thresholds) };
  db.prepare(
    `INSERT INTO quarantined_items (price_list_id, offer_id, reason, served_price, seq, ${ROW_COLUMNS})
     SELECT n.price_list_id, n.offer_id, CASE WHEN ${ZERO} THEN 'zero_price' WHEN ${DROP} THEN 'price_drop' ELSE 'price_rise' END,
            o.price, n.seq, ${prefixed('n')}
       ${JOIN_OLD} AND (${ZERO} OR ${DROP} OR ${RISE})`,
  ).run(params);
  db.prepare(
    `UPDATE price_items AS n SET (${ROW_COLUMNS}) = (SELECT ${prefixed('o')} FROM price_items o WHERE o.price_list_id = @old AND o.offer_id = n.offer_id)
      WHERE n.price_list_id = @new AND n.offer_id IN (SELECT offer_id FROM quarantined_items WHERE price_list_id = @new AND served_price IS NOT NULL)`,
  ).run(params);
  db.prepare('DELETE FROM price_items WHERE price_list_id = @new AND offer_id IN (SELECT offer_id FROM quarantined_items WHERE price_list_id = @new AND served_price IS NULL)').run(params);
  const counts = db.prepare(
    `SELECT count(*) AS item_count, total(available) AS available_count,
            (SELECT json_group_array(currency) FROM (SELECT DISTINCT currency FROM price_items WHERE price_list_id = @new ORDER BY currency)) AS currencies
       FROM price_items WHERE price_list_id = @new`,
  ).get(params) as Row;
  return {
    item_count: Number(counts.item_count),
    available_count: Number(counts.available_count),
    currencies: JSON.parse(counts.currencies as string),
    // Items serving previous values may sit in categories only the latest list used.
    category_ids: latest ? JSON.parse(latest.category_ids as string) : [],
  };
}
