import type pg from 'pg';
import type { GuardPolicy, VersionSource } from '../../model/versions.js';
import { SUPERSEDED_GRACE_MS } from '../item-row.js';
import type { PriceListRecord } from '../types.js';
import type {
  ItemCheck, ItemThresholds, ListCounts, QuarantinedItem, RawOffender, VersionRow, VersionStore,
} from '../versions-types.js';

type Row = Record<string, unknown>;
type Client = pg.ClientBase;

/*
 * CONTRACT §10 on PostgreSQL; the same predicates and steps as ../sqlite/sqlite-versions.ts
 * (see there). Statements are written with @name parameters, numbered by `named`.
 */

const ZERO = '(@zero::boolean AND n.price = 0 AND (o.offer_id IS NULL OR o.price > 0))';
const DROP = '(n.price > 0 AND o.price > 0 AND (o.price - n.price) * 100 > @drop::bigint * o.price)';
const RISE = '(o.price > 0 AND (n.price - o.price) * 100 > @rise::bigint * o.price)';
const PREDICATES: Record<Exclude<ItemCheck, 'removed'>, string> = { zero_price: ZERO, price_drop: DROP, price_rise: RISE };
const JOIN_OLD = 'FROM price_items n LEFT JOIN price_items o ON o.price_list_id = @old::bigint AND o.offer_id = n.offer_id WHERE n.price_list_id = @new::bigint';
const ROW_COLUMNS = 'name, price, old_price, currency, available, quantity, url, extra';
const prefixed = (alias: string) => ROW_COLUMNS.split(', ').map((c) => `${alias}.${c}`).join(', ');
const KEPT = "p.status = 'published' AND p.retired_at IS NULL";
const SWEEP_BATCH = 20_000;

const thresholdParams = (t: ItemThresholds) => ({ drop: t.max_price_drop_pct, rise: t.max_price_rise_pct, zero: t.zero_price === 'hold' });

/** `@name` placeholders → `$n` with the values in order (each name numbered once). */
export function named(sql: string, params: Record<string, unknown>): { text: string; values: unknown[] } {
  const order: string[] = [];
  const text = sql.replace(/@([a-z_]+)/g, (_m, name: string) => {
    if (!(name in params)) throw new Error(`no value for @${name}`);
    let at = order.indexOf(name);
    if (at < 0) at = order.push(name) - 1;
    return `$${at + 1}`;
  });
  return { text, values: order.map((name) => params[name]) };
}

export const LIST_COLUMNS = 'id, store_id, version, published_at, item_count, available_count, currencies, category_ids, items_of';

export const priceListFromRow = (r: Row): PriceListRecord => ({
  id: Number(r.id), store_id: r.store_id as string, version: Number(r.version), published_at: r.published_at as Date,
  item_count: Number(r.item_count), available_count: Number(r.available_count),
  currencies: r.currencies as string[], category_ids: r.category_ids as number[],
  items_list_id: Number(r.items_of ?? r.id),
});

/** What the versions need of the PostgreSQL store. */
export interface PgAccess {
  query(text: string, values: unknown[]): Promise<pg.QueryResult>;
  transaction<T>(work: (client: Client) => Promise<T>): Promise<T>;
}

const run = (client: Client | PgAccess, sql: string, params: Record<string, unknown>) => {
  const { text, values } = named(sql, params);
  return client.query(text, values);
};

export class PostgresVersions implements VersionStore {
  constructor(private readonly db: PgAccess) {}

  async getGuard(storeId: string): Promise<GuardPolicy | null> {
    const { rows } = await this.db.query('SELECT * FROM guard_policies WHERE store_id = $1', [storeId]);
    return rows[0] ? guardFrom(rows[0]) : null;
  }

  async putGuard(storeId: string, policy: GuardPolicy): Promise<void> {
    await run(this.db,
      `INSERT INTO guard_policies (store_id, max_removed_pct, max_price_drop_pct, max_price_rise_pct, min_items, zero_price, updated_at)
       VALUES (@store, @max_removed_pct, @max_price_drop_pct, @max_price_rise_pct, @min_items, @zero_price, now())
       ON CONFLICT (store_id) DO UPDATE SET max_removed_pct = excluded.max_removed_pct, max_price_drop_pct = excluded.max_price_drop_pct,
         max_price_rise_pct = excluded.max_price_rise_pct, min_items = excluded.min_items, zero_price = excluded.zero_price, updated_at = excluded.updated_at`,
      { ...policy, store: storeId });
  }

  async compare(newItems: number, oldItems: number | null, thresholds: ItemThresholds): Promise<ListCounts> {
    const { rows } = await run(this.db,
      `SELECT count(*) AS new_items, count(o.offer_id) AS matched,
              count(*) FILTER (WHERE o.price < n.price) AS price_up, count(*) FILTER (WHERE o.price > n.price) AS price_down,
              count(*) FILTER (WHERE o.price = n.price) AS unchanged, count(*) FILTER (WHERE ${ZERO}) AS zero_price,
              count(*) FILTER (WHERE ${DROP}) AS price_drop, count(*) FILTER (WHERE ${RISE}) AS price_rise
         ${JOIN_OLD}`,
      { new: newItems, old: oldItems ?? -1, ...thresholdParams(thresholds) });
    return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)])) as unknown as ListCounts;
  }

  async offenders(newItems: number, oldItems: number, check: ItemCheck, thresholds: ItemThresholds, limit: number): Promise<RawOffender[]> {
    const sql = check === 'removed'
      ? `SELECT o.offer_id, o.price AS old_price, NULL::bigint AS new_price FROM price_items o
          WHERE o.price_list_id = @old::bigint AND NOT EXISTS (SELECT 1 FROM price_items n WHERE n.price_list_id = @new::bigint AND n.offer_id = o.offer_id)
          ORDER BY o.seq LIMIT @limit::int`
      : `SELECT n.offer_id, o.price AS old_price, n.price AS new_price ${JOIN_OLD} AND ${PREDICATES[check]} ORDER BY n.seq LIMIT @limit::int`;
    const params: Record<string, unknown> = { new: newItems, old: oldItems, limit };
    if (check !== 'removed') Object.assign(params, thresholdParams(thresholds));
    const { rows } = await run(this.db, sql, params);
    return rows.map((r: Row) => ({ offer_id: r.offer_id as string, old_price: r.old_price === null ? null : Number(r.old_price), new_price: r.new_price === null ? null : Number(r.new_price) }));
  }

  async getVersion(storeId: string, version: number): Promise<VersionRow | null> {
    const { rows } = await this.db.query(`${VERSION_SELECT} AND p.version = $2`, [storeId, version]);
    return rows[0] ? versionFrom(rows[0]) : null;
  }

  async listVersions(storeId: string): Promise<VersionRow[]> {
    return (await this.db.query(`${VERSION_SELECT} ORDER BY p.version DESC`, [storeId])).rows.map(versionFrom);
  }

  async setDiff(listId: number, diff: string): Promise<void> {
    await this.db.query('UPDATE price_lists SET diff = $2 WHERE id = $1', [listId, diff]);
  }

  async releaseHeld(storeId: string, version: number, keepVersions: number): Promise<PriceListRecord | null> {
    return this.db.transaction(async (client) => {
      const now = await lockStore(client, storeId);
      const { rows } = await client.query(`SELECT id FROM price_lists p WHERE store_id = $1 AND version = $2 AND p.held AND ${KEPT}`, [storeId, version]);
      if (!rows[0]) return null;
      await client.query('UPDATE price_lists SET held = false, published_at = $2 WHERE id = $1', [rows[0].id, now]);
      return makeLatest(client, storeId, Number(rows[0].id), keepVersions);
    });
  }

  async discardHeld(storeId: string, version: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE price_lists p SET retired_at = 'epoch' WHERE store_id = $1 AND version = $2 AND p.held AND ${KEPT}`, [storeId, version]);
    return (rowCount ?? 0) > 0;
  }

  async rollback(storeId: string, version: number, keepVersions: number): Promise<PriceListRecord | null> {
    return this.db.transaction(async (client) => {
      const now = await lockStore(client, storeId);
      const { rows } = await client.query(`SELECT * FROM price_lists p WHERE store_id = $1 AND version = $2 AND NOT p.held AND ${KEPT}`, [storeId, version]);
      const target = rows[0] as Row | undefined;
      if (!target) return null;
      const created = await run(client,
        `INSERT INTO price_lists (store_id, status, version, created_at, published_at, item_count, available_count, currencies, category_ids, source, items_of)
         SELECT @store, 'published', last_version + 1, @now::timestamptz, @now::timestamptz, @item_count::int, @available_count::int, @currencies::jsonb, @category_ids::jsonb, 'rollback', @items::bigint
           FROM stores WHERE id = @store RETURNING id`,
        { store: storeId, now, item_count: target.item_count, available_count: target.available_count, currencies: JSON.stringify(target.currencies),
          category_ids: JSON.stringify(target.category_ids), items: target.items_of ?? target.id });
      await client.query('UPDATE stores SET last_version = last_version + 1 WHERE id = $1', [storeId]);
      return makeLatest(client, storeId, Number(created.rows[0].id), keepVersions);
    });
  }

  async pendingQuarantine(storeId: string, limit: number): Promise<{ count: number; items: QuarantinedItem[] }> {
    const { rows } = await this.db.query(
      `SELECT q.offer_id, q.reason, q.served_price, q.price, count(*) OVER () AS total
         FROM stores s JOIN quarantined_items q ON q.price_list_id = s.latest_price_list_id
        WHERE s.id = $1 ORDER BY q.seq LIMIT $2`, [storeId, limit]);
    return {
      count: rows.length === 0 ? 0 : Number(rows[0].total),
      items: rows.map((r: Row) => ({ offer_id: r.offer_id as string, check: r.reason as QuarantinedItem['check'], old_price: r.served_price === null ? null : Number(r.served_price), new_price: Number(r.price) })),
    };
  }

  async releaseQuarantine(storeId: string, offers: readonly string[] | null, keepVersions: number): Promise<{ list: PriceListRecord | null; missing: string[] }> {
    return this.db.transaction(async (client) => {
      const now = await lockStore(client, storeId);
      const { rows: latestRows } = await client.query('SELECT p.* FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = $1', [storeId]);
      const latest = latestRows[0] as Row | undefined;
      if (!latest) return { list: null, missing: offers ? [...offers] : [] };
      const q = { store: storeId, latest: latest.id, items: latest.items_of ?? latest.id, all: offers === null, offers: offers ?? [] };
      const { rows: missingRows } = await run(client,
        'SELECT o FROM unnest(@offers::text[]) o WHERE o NOT IN (SELECT offer_id FROM quarantined_items WHERE price_list_id = @latest::bigint)', { offers: q.offers, latest: q.latest });
      const missing = missingRows.map((r: Row) => r.o as string);
      const released = 'q.price_list_id = @latest::bigint AND (@all::boolean OR q.offer_id = ANY(@offers::text[]))';
      const picked = { latest: q.latest, all: q.all, offers: q.offers };
      const { rows: countRows } = await run(client, `SELECT count(*) AS n FROM quarantined_items q WHERE ${released}`, picked);
      if (missing.length > 0 || Number(countRows[0].n) === 0) return { list: null, missing };

      const { rows: idRows } = await client.query("INSERT INTO price_lists (store_id, status, created_at, source) VALUES ($1, 'draft', $2, 'publish') RETURNING id", [storeId, now]);
      const id = Number(idRows[0].id);
      await run(client,
        `INSERT INTO price_items (price_list_id, seq, offer_id, ${ROW_COLUMNS})
         SELECT @id::bigint, i.seq, i.offer_id, ${prefixed('i')} FROM price_items i
          WHERE i.price_list_id = @items::bigint AND i.offer_id NOT IN (SELECT q.offer_id FROM quarantined_items q WHERE ${released})`,
        { ...picked, id, items: q.items });
      await run(client, `INSERT INTO price_items (price_list_id, seq, offer_id, ${ROW_COLUMNS}) SELECT @id::bigint, q.seq, q.offer_id, ${prefixed('q')} FROM quarantined_items q WHERE ${released}`, { ...picked, id });
      await run(client, `DELETE FROM quarantined_items q WHERE ${released}`, picked);
      await client.query('UPDATE quarantined_items SET price_list_id = $1 WHERE price_list_id = $2', [id, q.latest]);
      await client.query(
        `UPDATE price_lists SET status = 'published', version = (SELECT last_version + 1 FROM stores WHERE id = $2), published_at = $3,
                (item_count, available_count, currencies) = (SELECT count(*), count(*) FILTER (WHERE available),
                  COALESCE((SELECT jsonb_agg(c ORDER BY c) FROM (SELECT DISTINCT currency AS c FROM price_items WHERE price_list_id = $1) d), '[]'::jsonb)
                  FROM price_items WHERE price_list_id = $1),
                category_ids = $4
          WHERE id = $1`,
        [id, storeId, now, JSON.stringify(latest.category_ids)]);
      await client.query('UPDATE stores SET last_version = last_version + 1 WHERE id = $1', [storeId]);
      return { list: await makeLatest(client, storeId, id, keepVersions), missing: [] };
    });
  }

  async sweep(storeId: string): Promise<void> {
    const { rows: due } = await this.db.query(
      `SELECT id, COALESCE(items_of, id) AS owner FROM price_lists
        WHERE store_id = $1 AND status = 'published' AND retired_at < now() - $2 * interval '1 millisecond' ORDER BY id`,
      [storeId, SUPERSEDED_GRACE_MS]);
    for (const { id, owner } of due as { id: number; owner: number }[]) {
      const { rows: shared } = await this.db.query('SELECT 1 FROM price_lists WHERE id <> $1 AND (id = $2 OR items_of = $2) LIMIT 1', [id, owner]);
      if (shared.length === 0) {
        // Small batches, each its own statement; the list row goes last (see the SQLite sweep).
        for (;;) {
          const { rowCount } = await this.db.query(
            'DELETE FROM price_items WHERE price_list_id = $1 AND seq IN (SELECT seq FROM price_items WHERE price_list_id = $1 ORDER BY seq LIMIT $2)',
            [owner, SWEEP_BATCH]);
          if (!rowCount) break;
        }
      }
      await this.db.transaction(async (client) => {
        await client.query('DELETE FROM quarantined_items WHERE price_list_id = $1', [id]);
        await client.query('DELETE FROM price_lists WHERE id = $1', [id]);
      });
    }
  }
}

/** Locks the store row (publications of one store take turns) and answers the time to publish at. */
async function lockStore(client: Client, storeId: string): Promise<Date> {
  const { rows } = await client.query('SELECT clock_timestamp() AS now FROM stores WHERE id = $1 FOR UPDATE', [storeId]);
  return rows[0]?.now as Date ?? new Date();
}

const VERSION_SELECT = `SELECT ${LIST_COLUMNS.replace(/\w+/g, 'p.$&')}, p.held, p.source, p.diff, p.id = s.latest_price_list_id AS is_latest
  FROM stores s JOIN price_lists p ON p.store_id = s.id WHERE s.id = $1 AND ${KEPT}`;

function versionFrom(r: Row): VersionRow {
  return { list: priceListFromRow(r), held: r.held === true, latest: r.is_latest === true, source: r.source as VersionSource, diff: (r.diff as string | null) ?? null };
}

function guardFrom(r: Row): GuardPolicy {
  return {
    max_removed_pct: Number(r.max_removed_pct), max_price_drop_pct: Number(r.max_price_drop_pct), max_price_rise_pct: Number(r.max_price_rise_pct),
    min_items: Number(r.min_items), zero_price: r.zero_price as GuardPolicy['zero_price'],
  };
}

/** As ../sqlite/sqlite-versions.ts makeLatest, under the store row's lock; answers the new latest. */
export async function makeLatest(client: Client, storeId: string, listId: number, keep: number): Promise<PriceListRecord> {
  const { rows } = await client.query(`SELECT ${LIST_COLUMNS} FROM price_lists WHERE id = $1`, [listId]);
  const list = priceListFromRow(rows[0]);
  await client.query('UPDATE stores SET latest_price_list_id = $2 WHERE id = $1', [storeId, listId]);
  await client.query(`UPDATE price_lists p SET retired_at = 'epoch' WHERE store_id = $1 AND p.held AND version < $2 AND ${KEPT}`, [storeId, list.version]);
  await client.query(
    `UPDATE price_lists p SET retired_at = clock_timestamp() WHERE store_id = $1 AND NOT p.held AND ${KEPT} AND version < (
       SELECT min(version) FROM (SELECT version FROM price_lists p WHERE store_id = $1 AND NOT p.held AND ${KEPT} ORDER BY version DESC LIMIT $2) k)`,
    [storeId, keep]);
  return list;
}

/** As ../sqlite/sqlite-versions.ts applyQuarantine, in the commit's transaction. */
export async function applyQuarantine(client: Client, storeId: string, draftId: number, thresholds: ItemThresholds): Promise<{ item_count: number; available_count: number; currencies: string[]; category_ids: number[] }> {
  const { rows } = await client.query('SELECT COALESCE(p.items_of, p.id) AS items, p.category_ids FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = $1', [storeId]);
  const latest = rows[0] as Row | undefined;
  const params = { new: draftId, old: latest ? Number(latest.items) : -1, ...thresholdParams(thresholds) };
  await run(client,
    `INSERT INTO quarantined_items (price_list_id, offer_id, reason, served_price, seq, ${ROW_COLUMNS})
     SELECT n.price_list_id, n.offer_id, CASE WHEN ${ZERO} THEN 'zero_price' WHEN ${DROP} THEN 'price_drop' ELSE 'price_rise' END,
            o.price, n.seq, ${prefixed('n')}
       ${JOIN_OLD} AND (${ZERO} OR ${DROP} OR ${RISE})`, params);
  await run(client,
    `UPDATE price_items n SET (${ROW_COLUMNS}) = (${prefixed('o')})
       FROM price_items o, quarantined_items q
      WHERE n.price_list_id = @new::bigint AND q.price_list_id = @new::bigint AND q.offer_id = n.offer_id AND q.served_price IS NOT NULL
        AND o.price_list_id = @old::bigint AND o.offer_id = n.offer_id`, { new: params.new, old: params.old });
  await client.query('DELETE FROM price_items n USING quarantined_items q WHERE n.price_list_id = $1 AND q.price_list_id = $1 AND q.offer_id = n.offer_id AND q.served_price IS NULL', [draftId]);
  const { rows: counts } = await client.query(
    `SELECT count(*) AS item_count, count(*) FILTER (WHERE available) AS available_count,
            COALESCE((SELECT jsonb_agg(c ORDER BY c) FROM (SELECT DISTINCT currency AS c FROM price_items WHERE price_list_id = $1) d), '[]'::jsonb) AS currencies
       FROM price_items WHERE price_list_id = $1`, [draftId]);
  return {
    item_count: Number(counts[0].item_count), available_count: Number(counts[0].available_count), currencies: counts[0].currencies as string[],
    category_ids: latest ? (latest.category_ids as number[]) : [],
  };
}
