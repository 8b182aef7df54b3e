import type { GuardPolicy, VersionSource } from '../../model/versions.js';
import { SUPERSEDED_GRACE_MS } from '../item-row.js';
import type { PriceListRecord } from '../types.js';
import type {
  ItemCheck, ItemThresholds, ListCounts, QuarantinedItem, RawOffender, VersionRow, VersionStore,
} from '../versions-types.js';
import { inBackground, type Row, type SqlDialect, type Steps } from './dialect.js';
import { recordChanges, recordingStatements, refreshQuarantinedCopies } from './changes.js';
import { forgetLists, purgeQueuedRows } from './purge.js';
import { LIST_COLUMNS, type RowMappers } from './rows.js';

/*
 * CONTRACT §10 for both dialects: history, the guard's comparison, quarantine and rollback.
 * The per-item checks are SQL predicates over `n` (the new list's row) LEFT JOIN `o` (the old
 * list's row of the same offer_id), written once here and used by the counts, the offenders
 * and the quarantine. Thresholds are whole numbers the domain has checked (guard.ts), so they
 * go into the text as literals. Every change is one transaction: old state or new, never a mix.
 */

/** A published or held version, not a draft, not out of retention. */
const KEPT = "status = 'published' AND retired_at IS NULL";

const whole = (n: number) => String(Math.trunc(Number(n)));

/** Where the predicates read the new price, the old price and "no old row": `n` and `o` rows by default. */
interface PriceOperands {
  n: string;
  o: string;
  noOld: string;
}
const JOINED_ROWS: PriceOperands = { n: 'n.price', o: 'o.price', noOld: 'o.offer_id IS NULL' };
/** The rows' copies recorded for the changes feed (price_list_changes, alias c). */
const RECORDED_COPIES: PriceOperands = { n: 'c.new_price', o: 'c.old_price', noOld: 'c.old_seq IS NULL' };

function predicates(t: ItemThresholds, { n, o, noOld }: PriceOperands = JOINED_ROWS): Record<Exclude<ItemCheck, 'removed'>, string> {
  return {
    zero_price: t.zero_price === 'hold' ? `(${n} = 0 AND (${noOld} OR ${o} > 0))` : '(1 = 0)',
    price_drop: `(${n} > 0 AND ${o} > 0 AND (${o} - ${n}) * 100 > ${whole(t.max_price_drop_pct)} * ${o})`,
    price_rise: `(${o} > 0 AND (${n} - ${o}) * 100 > ${whole(t.max_price_rise_pct)} * ${o})`,
  };
}

/** `n` the new list's rows, `o` the old list's row of the same offer (params: old, new). */
const JOIN_OLD = 'FROM price_items n LEFT JOIN price_items o ON o.price_list_id = ? AND o.offer_id = n.offer_id WHERE n.price_list_id = ?';

/** The item columns a quarantine keeps and a release copies, the row's quote_free bits with them (quote-free.ts). */
const ROW_COLUMNS = 'name, price, old_price, currency, available, quantity, url, extra, quote_free';
const prefixed = (columns: string, alias: string) => columns.split(', ').map((c) => `${alias}.${c}`).join(', ');

export class SqlVersionRepository implements VersionStore {
  constructor(private readonly d: SqlDialect, private readonly map: RowMappers) {}

  async getGuard(storeId: string): Promise<GuardPolicy | null> {
    const { rows } = await this.d.query({ sql: 'SELECT * FROM guard_policies WHERE store_id = ?', params: [storeId] });
    return rows[0] ? guardFrom(rows[0]) : null;
  }

  async putGuard(storeId: string, p: GuardPolicy): Promise<void> {
    await this.d.query({
      sql: `INSERT INTO guard_policies (store_id, max_removed_pct, max_price_drop_pct, max_price_rise_pct, min_items, zero_price, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ${this.d.now})
            ON CONFLICT (store_id) DO UPDATE SET max_removed_pct = excluded.max_removed_pct, max_price_drop_pct = excluded.max_price_drop_pct,
              max_price_rise_pct = excluded.max_price_rise_pct, min_items = excluded.min_items, zero_price = excluded.zero_price, updated_at = excluded.updated_at`,
      params: [storeId, p.max_removed_pct, p.max_price_drop_pct, p.max_price_rise_pct, p.min_items, p.zero_price],
    });
  }

  async compare(newItems: number, oldItems: number | null, thresholds: ItemThresholds): Promise<ListCounts> {
    const p = predicates(thresholds);
    // One pass over the new list, each row looking up its offer in the old one by the unique index.
    const { rows } = await this.d.query({
      sql: `SELECT count(*) AS new_items, count(o.offer_id) AS matched,
                   count(*) FILTER (WHERE o.price < n.price) AS price_up, count(*) FILTER (WHERE o.price > n.price) AS price_down,
                   count(*) FILTER (WHERE o.price = n.price) AS unchanged, count(*) FILTER (WHERE ${p.zero_price}) AS zero_price,
                   count(*) FILTER (WHERE ${p.price_drop}) AS price_drop, count(*) FILTER (WHERE ${p.price_rise}) AS price_rise
              ${JOIN_OLD}`,
      params: [oldItems ?? -1, newItems],
    });
    return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)])) as unknown as ListCounts;
  }

  async compareDraft(draftId: number, old: { items: number; count: number } | null, newCount: number, thresholds: ItemThresholds): Promise<ListCounts> {
    const none = { new_items: newCount, matched: 0, price_up: 0, price_down: 0, unchanged: 0, price_drop: 0, price_rise: 0, zero_price: 0 };
    // A store's first list: nothing to compare, nothing a changes request could ask for.
    if (old === null) return none;
    const p = predicates(thresholds, RECORDED_COPIES);
    // The recording statements write: on SQLite off the event loop, on its write thread.
    const { addedOrChanged, removed } = recordingStatements(this.d);
    await inBackground(this.d, { sql: addedOrChanged, params: [draftId, old.items, draftId] });
    // Every offer the checks can count has a new price or is new: it is among those recorded,
    // whose copies of both rows hold the prices the checks read.
    const { rows } = await this.d.query({
      sql: `SELECT count(*) FILTER (WHERE ${RECORDED_COPIES.noOld}) AS added,
                   count(*) FILTER (WHERE c.old_price < c.new_price) AS price_up, count(*) FILTER (WHERE c.old_price > c.new_price) AS price_down,
                   count(*) FILTER (WHERE ${p.zero_price}) AS zero_price, count(*) FILTER (WHERE ${p.price_drop}) AS price_drop,
                   count(*) FILTER (WHERE ${p.price_rise}) AS price_rise
              FROM price_list_changes c WHERE c.price_list_id = ? AND c.new_seq IS NOT NULL`,
      params: [draftId],
    });
    const r = Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]));
    const matched = newCount - r.added;
    if (removed !== null && old.count > matched) await inBackground(this.d, { sql: removed, params: [draftId, old.items, draftId] });
    await this.d.query({ sql: 'UPDATE price_lists SET changes_base = ? WHERE id = ?', params: [old.items, draftId] });
    return { ...none, matched, price_up: r.price_up, price_down: r.price_down, unchanged: matched - r.price_up - r.price_down, zero_price: r.zero_price, price_drop: r.price_drop, price_rise: r.price_rise };
  }

  async offenders(newItems: number, oldItems: number, check: ItemCheck, thresholds: ItemThresholds, limit: number): Promise<RawOffender[]> {
    const query = check === 'removed'
      ? {
        sql: `SELECT o.offer_id, o.price AS old_price, NULL AS new_price FROM price_items o
               WHERE o.price_list_id = ? AND NOT EXISTS (SELECT 1 FROM price_items n WHERE n.price_list_id = ? AND n.offer_id = o.offer_id)
               ORDER BY o.seq LIMIT ?`,
        params: [oldItems, newItems, limit],
      }
      : { sql: `SELECT n.offer_id, o.price AS old_price, n.price AS new_price ${JOIN_OLD} AND ${predicates(thresholds)[check]} ORDER BY n.seq LIMIT ?`, params: [oldItems, newItems, limit] };
    const { rows } = await this.d.query(query);
    return rows.map((r) => ({ offer_id: r.offer_id as string, old_price: r.old_price === null ? null : Number(r.old_price), new_price: r.new_price === null ? null : Number(r.new_price) }));
  }

  async getVersion(storeId: string, version: number): Promise<VersionRow | null> {
    const { rows } = await this.d.query({ sql: `${VERSION_SELECT} AND p.version = ?`, params: [storeId, version] });
    return rows[0] ? this.versionFrom(rows[0]) : null;
  }

  async listVersions(storeId: string): Promise<VersionRow[]> {
    const { rows } = await this.d.query({ sql: `${VERSION_SELECT} ORDER BY p.version DESC`, params: [storeId] });
    return rows.map((r) => this.versionFrom(r));
  }

  async setDiff(listId: number, diff: string): Promise<void> {
    await this.d.query({ sql: 'UPDATE price_lists SET diff = ? WHERE id = ?', params: [diff, listId] });
  }

  releaseHeld(storeId: string, version: number, keepVersions: number): Promise<PriceListRecord | null> {
    const { d } = this;
    return this.change(function* () {
      const now = yield* lockStore(d, storeId);
      const found = yield { sql: `SELECT id FROM price_lists WHERE store_id = ? AND version = ? AND held = 1 AND ${KEPT}`, params: [storeId, version] };
      if (!found.rows[0]) return null;
      const id = Number(found.rows[0].id);
      // Published now: Last-Modified never goes back.
      yield { sql: 'UPDATE price_lists SET held = 0, published_at = ? WHERE id = ?', params: [now, id] };
      yield* makeLatest(d, storeId, id, keepVersions);
      return id;
    }());
  }

  async discardHeld(storeId: string, version: number): Promise<boolean> {
    // Never served, so no reader to wait for: the next sweep deletes it.
    const { changes } = await this.d.query({
      sql: `UPDATE price_lists SET retired_at = ? WHERE store_id = ? AND version = ? AND held = 1 AND ${KEPT}`,
      params: [this.d.timeParam(new Date(0)), storeId, version],
    });
    return changes > 0;
  }

  rollback(storeId: string, version: number, keepVersions: number): Promise<PriceListRecord | null> {
    const { d } = this;
    return this.change(function* () {
      const now = yield* lockStore(d, storeId);
      const found = yield { sql: `SELECT * FROM price_lists WHERE store_id = ? AND version = ? AND held = 0 AND ${KEPT}`, params: [storeId, version] };
      const target = found.rows[0];
      if (!target) return null;
      // One row, no items: the new version serves the target's rows (items_of), so its cost does not grow with the list.
      const bumped = yield { sql: 'UPDATE stores SET last_version = last_version + 1 WHERE id = ? RETURNING last_version', params: [storeId] };
      const created = yield {
        sql: `INSERT INTO price_lists (store_id, status, version, created_at, published_at, item_count, available_count, currencies, category_ids, source, items_of)
              VALUES (?, 'published', ?, ?, ?, ?, ?, ?, ?, 'rollback', ?) RETURNING id`,
        params: [storeId, bumped.rows[0].last_version, now, now, target.item_count, target.available_count, jsonParam(target.currencies), jsonParam(target.category_ids), target.items_of ?? target.id],
      };
      const id = Number(created.rows[0].id);
      yield* makeLatest(d, storeId, id, keepVersions);
      return id;
    }());
  }

  async pendingQuarantine(storeId: string, limit: number): Promise<{ count: number; items: QuarantinedItem[] }> {
    const { rows } = await this.d.query({
      sql: `SELECT q.offer_id, q.reason, q.served_price, q.price, count(*) OVER () AS total
              FROM stores s JOIN quarantined_items q ON q.price_list_id = s.latest_price_list_id
             WHERE s.id = ? ORDER BY q.seq LIMIT ?`,
      params: [storeId, limit],
    });
    return {
      count: rows.length === 0 ? 0 : Number(rows[0].total),
      items: rows.map((r) => ({ offer_id: r.offer_id as string, check: r.reason as QuarantinedItem['check'], old_price: r.served_price === null ? null : Number(r.served_price), new_price: Number(r.price) })),
    };
  }

  async releaseQuarantine(storeId: string, offers: readonly string[] | null, keepVersions: number): Promise<{ list: PriceListRecord | null; missing: string[] }> {
    const { d } = this;
    let missing: string[] = [];
    const list = await this.change(function* () {
      const now = yield* lockStore(d, storeId);
      const latestRows = yield { sql: 'SELECT p.* FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = ?', params: [storeId] };
      const latest = latestRows.rows[0];
      if (!latest) {
        missing = offers ? [...offers] : [];
        return null;
      }
      const latestId = Number(latest.id);
      if (offers) {
        const held = yield { sql: `SELECT offer_id FROM quarantined_items WHERE price_list_id = ? AND ${d.anyText('offer_id')}`, params: [latestId, d.texts(offers)] };
        const found = new Set(held.rows.map((r) => r.offer_id as string));
        missing = offers.filter((o) => !found.has(o));
      }
      // The released rows, as SQL over quarantined_items q, and its parameters.
      const released = offers ? `q.price_list_id = ? AND ${d.anyText('q.offer_id')}` : 'q.price_list_id = ?';
      const releasedParams = offers ? [latestId, d.texts(offers)] : [latestId];
      const count = yield { sql: `SELECT count(*) AS n FROM quarantined_items q WHERE ${released}`, params: releasedParams };
      if (missing.length > 0 || Number(count.rows[0].n) === 0) return null;

      const draft = yield { sql: `INSERT INTO price_lists (store_id, status, created_at, source) VALUES (?, 'draft', ?, 'publish') RETURNING id`, params: [storeId, now] };
      const newId = Number(draft.rows[0].id);
      // By SQL: the served rows but the released ones, then the released ones' new values at their own positions.
      yield {
        sql: `INSERT INTO price_items (price_list_id, seq, offer_id, ${ROW_COLUMNS})
              SELECT CAST(? AS bigint), i.seq, i.offer_id, ${prefixed(ROW_COLUMNS, 'i')} FROM price_items i
               WHERE i.price_list_id = ? AND i.offer_id NOT IN (SELECT q.offer_id FROM quarantined_items q WHERE ${released})`,
        params: [newId, latest.items_of ?? latestId, ...releasedParams],
      };
      yield {
        sql: `INSERT INTO price_items (price_list_id, seq, offer_id, ${ROW_COLUMNS}) SELECT CAST(? AS bigint), q.seq, q.offer_id, ${prefixed(ROW_COLUMNS, 'q')} FROM quarantined_items q WHERE ${released}`,
        params: [newId, ...releasedParams],
      };
      yield { sql: `DELETE FROM quarantined_items WHERE offer_id IN (SELECT q.offer_id FROM quarantined_items q WHERE ${released}) AND price_list_id = ?`, params: [...releasedParams, latestId] };
      // What stays quarantined moves with the version that now serves its previous values.
      yield { sql: 'UPDATE quarantined_items SET price_list_id = ? WHERE price_list_id = ?', params: [newId, latestId] };
      const served = yield* servedSummary(newId);
      yield {
        sql: `UPDATE price_lists SET status = 'published', version = (SELECT last_version + 1 FROM stores WHERE id = ?), published_at = ?,
                     item_count = ?, available_count = ?, currencies = ?, category_ids = ? WHERE id = ?`,
        params: [storeId, now, served.item_count, served.available_count, JSON.stringify(served.currencies), jsonParam(latest.category_ids), newId],
      };
      yield { sql: 'UPDATE stores SET last_version = last_version + 1 WHERE id = ?', params: [storeId] };
      yield* makeLatest(d, storeId, newId, keepVersions);
      return newId;
    }());
    return { list, missing };
  }

  async sweep(storeId: string): Promise<void> {
    const { rows: due } = await this.d.query({
      sql: `SELECT id, COALESCE(items_of, id) AS owner FROM price_lists WHERE store_id = ? AND status = 'published' AND retired_at < ${this.d.ago(SUPERSEDED_GRACE_MS)} ORDER BY id`,
      params: [storeId],
    });
    const d = this.d;
    for (const row of due) {
      const [id, owner] = [Number(row.id), Number(row.owner)];
      // The list's row goes first, its rows after it (purge.ts); the rows stay while any other
      // version serves them (a rollback's items_of).
      await d.transaction((function* () {
        const shared = yield { sql: 'SELECT 1 AS x FROM price_lists WHERE id <> ? AND (id = ? OR items_of = ?) LIMIT 1', params: [id, owner, owner] };
        yield* forgetLists(d, [id], shared.rows.length === 0 ? [owner] : []);
      })());
    }
    await purgeQueuedRows(d);
  }

  async sweepDue(): Promise<number> {
    const { rows } = await this.d.query({
      sql: `SELECT DISTINCT store_id FROM price_lists WHERE status = 'published' AND retired_at < ${this.d.ago(SUPERSEDED_GRACE_MS)}`,
      params: [],
    });
    for (const row of rows) await this.sweep(String(row.store_id));
    // Rows a crash left queued.
    await purgeQueuedRows(this.d);
    return rows.length;
  }

  /** Runs a change of the latest; the key look-ups remembered name the old one. */
  private async change(steps: Steps<number | null>): Promise<PriceListRecord | null> {
    const id = await this.d.transaction(steps);
    // A rollback or a released hold is a new latest: warmed, and its webhook events sent, at once.
    if (id !== null) this.d.announce?.();
    return this.listOf(id);
  }

  private async listOf(id: number | null): Promise<PriceListRecord | null> {
    if (id === null) return null;
    this.d.keyLookups?.invalidate();
    const { rows } = await this.d.query({ sql: `SELECT ${LIST_COLUMNS} FROM price_lists WHERE id = ?`, params: [id] });
    return this.map.priceList(rows[0]);
  }

  private versionFrom(r: Row): VersionRow {
    return { list: this.map.priceList(r), held: Number(r.held) === 1, latest: Number(r.is_latest) === 1, source: r.source as VersionSource, diff: (r.diff as string | null) ?? null };
  }
}

const VERSION_SELECT = `SELECT ${LIST_COLUMNS.replace(/\w+/g, 'p.$&')}, p.held, p.source, p.diff, CASE WHEN p.id = s.latest_price_list_id THEN 1 ELSE 0 END AS is_latest
  FROM stores s JOIN price_lists p ON p.store_id = s.id WHERE s.id = ? AND p.status = 'published' AND p.retired_at IS NULL`;

/** A JSON column's value back as a parameter (SQLite keeps text, PostgreSQL hands jsonb over parsed). */
const jsonParam = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function guardFrom(r: Row): GuardPolicy {
  return {
    max_removed_pct: Number(r.max_removed_pct), max_price_drop_pct: Number(r.max_price_drop_pct), max_price_rise_pct: Number(r.max_price_rise_pct),
    min_items: Number(r.min_items), zero_price: r.zero_price as GuardPolicy['zero_price'],
  };
}

/** Locks the store row (its changes take turns; SQLite: the write lock) and answers the time to publish at. */
function* lockStore(d: SqlDialect, storeId: string): Steps<unknown> {
  const { rows } = yield { sql: `UPDATE stores SET last_version = last_version WHERE id = ? RETURNING ${d.now} AS now`, params: [storeId] };
  return rows[0]?.now;
}

/** A list's served counts and currencies, as its rows now are. */
function* servedSummary(listId: number): Steps<{ item_count: number; available_count: number; currencies: string[] }> {
  const counts = yield { sql: 'SELECT count(*) AS n, count(*) FILTER (WHERE available) AS a FROM price_items WHERE price_list_id = ?', params: [listId] };
  const currencies = yield { sql: 'SELECT DISTINCT currency FROM price_items WHERE price_list_id = ? ORDER BY currency', params: [listId] };
  return { item_count: Number(counts.rows[0].n), available_count: Number(counts.rows[0].a), currencies: currencies.rows.map((r) => r.currency as string) };
}

/**
 * In a change's transaction: `listId` becomes the store's latest; held versions older than it
 * are discarded (a later version decided for them); published versions beyond the newest
 * `keep` leave retention (retired_at: unserved now, deleted by a sweep after the grace period,
 * so a download in progress still finishes).
 */
export function* makeLatest(d: SqlDialect, storeId: string, listId: number, keep: number): Steps<void> {
  const { rows } = yield { sql: 'SELECT version FROM price_lists WHERE id = ?', params: [listId] };
  // CONTRACT §11: what this version changes against the latest it replaces, recorded once.
  yield* recordChanges(d, storeId, listId);
  yield { sql: 'UPDATE stores SET latest_price_list_id = ? WHERE id = ?', params: [listId, storeId] };
  yield { sql: `UPDATE price_lists SET retired_at = ? WHERE store_id = ? AND held = 1 AND version < ? AND ${KEPT}`, params: [d.timeParam(new Date(0)), storeId, rows[0].version] };
  yield {
    sql: `UPDATE price_lists SET retired_at = ${d.now} WHERE store_id = ? AND held = 0 AND ${KEPT} AND version < (
            SELECT min(version) FROM (SELECT version FROM price_lists WHERE store_id = ? AND held = 0 AND ${KEPT} ORDER BY version DESC LIMIT ?) k)`,
    params: [storeId, storeId, keep],
  };
}

/**
 * In the commit's transaction: the draft's items that trip `thresholds` against the latest
 * list are quarantined. Their proposed rows are kept in quarantined_items; in the draft they
 * take their previous values, or (a new item) are left out. Answers the draft's served counts
 * and currencies, and the latest list's category ids (served items may sit in them).
 */
export function* applyQuarantine(d: SqlDialect, storeId: string, draftId: number, thresholds: ItemThresholds): Steps<{ item_count: number; available_count: number; currencies: string[]; category_ids: number[] }> {
  const latest = yield { sql: 'SELECT COALESCE(p.items_of, p.id) AS items, p.category_ids FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = ?', params: [storeId] };
  const old = latest.rows[0] ? Number(latest.rows[0].items) : -1;
  const p = predicates(thresholds);
  yield {
    sql: `INSERT INTO quarantined_items (price_list_id, offer_id, reason, served_price, seq, ${ROW_COLUMNS})
          SELECT n.price_list_id, n.offer_id, CASE WHEN ${p.zero_price} THEN 'zero_price' WHEN ${p.price_drop} THEN 'price_drop' ELSE 'price_rise' END,
                 o.price, n.seq, ${prefixed(ROW_COLUMNS, 'n')}
            ${JOIN_OLD} AND (${p.zero_price} OR ${p.price_drop} OR ${p.price_rise})`,
    params: [old, draftId],
  };
  yield {
    sql: `UPDATE price_items AS n SET (${ROW_COLUMNS}) = (SELECT ${prefixed(ROW_COLUMNS, 'o')} FROM price_items o WHERE o.price_list_id = ? AND o.offer_id = n.offer_id)
           WHERE n.price_list_id = ? AND n.offer_id IN (SELECT offer_id FROM quarantined_items WHERE price_list_id = ? AND served_price IS NOT NULL)`,
    params: [old, draftId, draftId],
  };
  yield {
    sql: 'DELETE FROM price_items WHERE price_list_id = ? AND offer_id IN (SELECT offer_id FROM quarantined_items WHERE price_list_id = ? AND served_price IS NULL)',
    params: [draftId, draftId],
  };
  // The changes recorded at the comparison copied the proposed rows: they follow the served ones.
  yield* refreshQuarantinedCopies(draftId);
  const served = yield* servedSummary(draftId);
  return { ...served, category_ids: latest.rows[0] ? d.json<number[]>(latest.rows[0].category_ids) : [] };
}
