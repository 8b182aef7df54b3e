import { DEFAULT_PRICE_TYPE_ID, DEFAULT_PRICE_TYPE_NAME, type Profile } from '../../model/profile.js';
import type { ApiKeyRecord, PriceListRecord, StoreRecord } from '../../domain/records.js';

/** What the admin API shows of each record: dates as RFC 3339 text, never a key's value or hash. */

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

export const storeView = (s: StoreRecord) => ({
  id: s.id, name: s.name, currency: s.currency, url: s.url, company: s.company, created_at: iso(s.created_at),
});

export const keyView = (k: ApiKeyRecord) => ({
  id: k.id, store_id: k.store_id, label: k.label, prefix: k.prefix,
  created_at: iso(k.created_at), last_used_at: iso(k.last_used_at), revoked_at: iso(k.revoked_at),
});

export const priceListView = (list: PriceListRecord) => ({
  version: list.version, item_count: list.item_count, available_count: list.available_count, published_at: iso(list.published_at),
});

export const profileView = (p: Profile) => ({
  id: p.id, store_id: p.store_id, revision: p.revision, updated_at: iso(p.updated_at),
  name: p.name, columns: p.columns, delimiter: p.delimiter, decimal_separator: p.decimal_separator,
  header: p.header, bom: p.bom, encoding: p.encoding,
  escape_formulas: p.escape_formulas ?? false, price_type_id: p.price_type_id ?? DEFAULT_PRICE_TYPE_ID, price_type_name: p.price_type_name ?? DEFAULT_PRICE_TYPE_NAME,
});
