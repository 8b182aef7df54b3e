import type { DelimitedRecordSpec } from '../model/delimited-record.js';
import type { PriceItem } from '../model/price-item.js';
import type { Profile, ProfileDefinition } from '../model/profile.js';
import type {
  ApiKeyRecord, CategoryRecord, Database, KeyLookup, LatestPriceList, NewApiKey, NewStore, PriceListRecord, PublicationDraft,
  ReadItemsOptions, StoreRecord,
} from './types.js';

/**
 * @deprecated The flat 21-member seam of before the split into repositories, kept so code
 * written against it keeps working until it is renamed (Store → Database, see the renames in
 * the commit that removes this file).
 */
export interface Store {
  /** The Database this view is over. */
  readonly database: Database;
  readonly dialect: 'sqlite' | 'postgres';
  migrate(): Promise<void>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  pendingMigrations(): Promise<number>;
  journalMode?(): string;
  poolUse?(): { total: number; idle: number; waiting: number; max: number };
  close(): Promise<void>;

  createStore(store: NewStore): Promise<StoreRecord>;
  getStore(id: string): Promise<StoreRecord | null>;
  listStores(): Promise<StoreRecord[]>;

  insertKey(key: NewApiKey): Promise<ApiKeyRecord>;
  /** The key by its hash, with its store and the store's latest price list. */
  findKeyByHash(hash: string): Promise<KeyLookup | null>;
  getKey(id: string): Promise<ApiKeyRecord | null>;
  listKeys(storeId: string): Promise<ApiKeyRecord[]>;
  touchKey(id: string, at: Date): Promise<void>;
  /** Sets revoked_at if not yet set; returns the key, or null when there is no such key. */
  revokeKey(id: string, at: Date): Promise<ApiKeyRecord | null>;

  /** Creates a profile, or replaces profile `id` of the same store (revision + 1). Null when `id` is not this store's. */
  putProfile(storeId: string, definition: ProfileDefinition, id?: number): Promise<Profile | null>;
  getProfile(id: number): Promise<Profile | null>;
  listProfiles(storeId: string): Promise<Profile[]>;

  beginPublication(storeId: string): Promise<PublicationDraft>;
  getLatestPriceList(storeId: string): Promise<PriceListRecord | null>;
  /** Every store that has published, with its latest list, in one query (the render cache's warmer polls it). */
  listLatestPriceLists(): Promise<LatestPriceList[]>;
  /** The categories with these ids (CategoryRecord.path resolves names and parents). */
  getCategories(storeId: string, ids: readonly number[]): Promise<CategoryRecord[]>;
  /** The list's items in publication order, in batches. */
  /** @deprecated openDatabase starts the threads; absent here, so `startExportThreads?.()` does nothing. */
  startExportThreads?(): void;
  readItems(priceListId: number, options: ReadItemsOptions): AsyncIterable<PriceItem[]>;
  /**
   * The list's items as delimited records built by the database itself (UTF-8, publication
   * order, chunks of whole records), when the store can; see domain/delimited-record.ts.
   */
  renderRecords(priceListId: number, spec: DelimitedRecordSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> | null;
}

export function legacyStore(db: Database): Store {
  return {
    database: db,
    dialect: db.dialect,
    migrate: () => db.migrate(),
    ping: () => db.ping(),
    pendingMigrations: () => db.pendingMigrations(),
    journalMode: db.journalMode ? () => db.journalMode!() : undefined,
    poolUse: db.poolUse ? () => db.poolUse!() : undefined,
    close: () => db.close(),
    createStore: (store) => db.stores.create(store),
    getStore: (id) => db.stores.get(id),
    listStores: () => db.stores.list(),
    insertKey: (key) => db.keys.insert(key),
    findKeyByHash: (hash) => db.keys.findByHash(hash),
    getKey: (id) => db.keys.get(id),
    listKeys: (storeId) => db.keys.list(storeId),
    touchKey: (id, at) => db.keys.touch(id, at),
    revokeKey: (id, at) => db.keys.revoke(id, at),
    putProfile: (storeId, definition, id) => db.profiles.put(storeId, definition, id),
    getProfile: (id) => db.profiles.get(id),
    listProfiles: (storeId) => db.profiles.list(storeId),
    beginPublication: (storeId) => db.priceLists.beginPublication(storeId),
    getLatestPriceList: (storeId) => db.priceLists.latest(storeId),
    listLatestPriceLists: () => db.priceLists.listLatest(),
    getCategories: (storeId, ids) => db.priceLists.categories(storeId, ids),
    readItems: (listId, options) => db.priceLists.readItems(listId, options),
    renderRecords: (listId, spec, options) => db.priceLists.renderRecords(listId, spec, options),
  };
}
