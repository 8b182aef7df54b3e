import { scopesFromJson } from '../../model/key-scopes.js';
import type { Profile, ProfileDefinition } from '../../model/profile.js';
import type { ApiKeyRecord, CategoryRecord, KeyLookup, PriceListRecord, StoreRecord } from '../types.js';
import type { Row, SqlDialect } from './dialect.js';

/*
 * Rows to records, for both dialects: only how a time or a JSON column comes back differs,
 * and the dialect says that.
 */

export interface RowMappers {
  store(r: Row): StoreRecord;
  key(r: Row): ApiKeyRecord;
  priceList(r: Row): PriceListRecord;
  profile(r: Row): Profile;
  category(r: Row): CategoryRecord;
  /** A row of KEY_LOOKUP_SQL. */
  keyLookup(r: Row): KeyLookup;
  /** A row of a price_lists `p.*` joined with the store's `s_…` columns. */
  storeOfList(r: Row): StoreRecord;
}

export function rowMappers(d: Pick<SqlDialect, 'time' | 'json'>): RowMappers {
  const timeOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : d.time(value));
  const m: RowMappers = {
    store: (r) => ({
      id: r.id as string, name: r.name as string, currency: r.currency as string,
      url: (r.url as string | null) ?? null, company: (r.company as string | null) ?? null, created_at: d.time(r.created_at),
    }),
    key: (r) => ({
      id: r.id as string, store_id: r.store_id as string, label: (r.label as string | null) ?? null, prefix: r.prefix as string,
      created_at: d.time(r.created_at), last_used_at: timeOrNull(r.last_used_at), revoked_at: timeOrNull(r.revoked_at),
      scopes: scopesFromJson(r.scopes), expires_at: timeOrNull(r.expires_at),
    }),
    priceList: (r) => ({
      id: Number(r.id), store_id: r.store_id as string, version: Number(r.version), published_at: d.time(r.published_at),
      item_count: Number(r.item_count), available_count: Number(r.available_count),
      currencies: d.json<string[]>(r.currencies), category_ids: d.json<number[]>(r.category_ids),
      items_list_id: Number(r.items_of ?? r.id),
    }),
    profile: (r) => ({
      ...(JSON.parse(r.definition as string) as ProfileDefinition),
      id: Number(r.id), store_id: r.store_id as string, revision: Number(r.revision), updated_at: d.time(r.updated_at),
    }),
    category: (r) => ({
      id: Number(r.id), store_id: r.store_id as string, path: r.path as string, parent_id: r.parent_id === null ? null : Number(r.parent_id),
    }),
    storeOfList: (r) => m.store({ id: r.store_id, name: r.s_name, currency: r.s_currency, url: r.s_url, company: r.s_company, created_at: r.s_created_at }),
    keyLookup: (r) => ({
      key: m.key(r),
      store: m.storeOfList(r),
      latest: r.p_id === null ? null : m.priceList({
        id: r.p_id, store_id: r.store_id, version: r.p_version, published_at: r.p_published_at, item_count: r.p_item_count,
        available_count: r.p_available_count, currencies: r.p_currencies, category_ids: r.p_category_ids, items_of: r.p_items_of,
      }),
    }),
  };
  return m;
}

/** The store's columns as `s_…`, beside a key's or a list's own. */
const STORE_AS = 's.name AS s_name, s.currency AS s_currency, s.url AS s_url, s.company AS s_company, s.created_at AS s_created_at';

/**
 * A key with its store and the store's latest list, in one round trip, for the keys `where` names
 * (RowMappers.keyLookup reads a row; the hash is selected only to tell several keys' rows apart).
 * SQLite remembers these look-ups until one of their columns changes: a column added here must be
 * named in the key_lookup_generation triggers (sqlite/schema.ts).
 */
const keyLookupSql = (where: string, hashColumn = ''): string =>
  `SELECT ${hashColumn}k.id, k.store_id, k.label, k.prefix, k.created_at, k.last_used_at, k.revoked_at, k.scopes, k.expires_at, ${STORE_AS},
       p.id AS p_id, p.version AS p_version, p.published_at AS p_published_at, p.item_count AS p_item_count,
       p.available_count AS p_available_count, p.currencies AS p_currencies, p.category_ids AS p_category_ids, p.items_of AS p_items_of
  FROM api_keys k JOIN stores s ON s.id = k.store_id
  LEFT JOIN price_lists p ON p.id = s.latest_price_list_id
 WHERE ${where}`;

export const KEY_LOOKUP_SQL = keyLookupSql('k.hash = ?');

/** KEY_LOOKUP_SQL for several keys at once, each row with its `k_hash`; `where` matches `k.hash` against them. */
export const keyLookupManySql = (where: string): string => keyLookupSql(where, 'k.hash AS k_hash, ');

/** A published list's columns (not its draft bookkeeping). */
export const LIST_COLUMNS = 'id, store_id, version, published_at, item_count, available_count, currencies, category_ids, items_of';
const P_LIST_COLUMNS = LIST_COLUMNS.replace(/\w+/g, 'p.$&');

export const LATEST_LIST_SQL = `SELECT ${P_LIST_COLUMNS} FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id WHERE s.id = ?`;

export const EVERY_LATEST_LIST_SQL = `SELECT ${P_LIST_COLUMNS}, ${STORE_AS}
  FROM stores s JOIN price_lists p ON p.id = s.latest_price_list_id ORDER BY s.id`;

export const KEY_COLUMNS = 'id, store_id, label, prefix, created_at, last_used_at, revoked_at, scopes, expires_at';
