/**
 * The storage seam: a `Database` of one repository per aggregate (after immich's
 * repositories). The domain talks only to these interfaces; `src/store/factory.ts` opens
 * the SQLite or the PostgreSQL one from DATABASE_URL. Both are the one SQL base in
 * `sql/` over a dialect, and pass the same contract tests (`store.contract.test.ts`).
 */
import type { KeyScopes } from '../model/key-scopes.js';
import type { RecordSpec } from '../model/record-spec.js';
import type { PriceItem } from '../model/price-item.js';
import type { Profile, ProfileDefinition } from '../model/profile.js';
import type { CommitOutcome, VersionStore } from './versions-types.js';
import type { ChangesRepository } from './changes-types.js';

export type { ChangeCandidate, ChangeSpan, ChangesRepository } from './changes-types.js';

export type {
  CommitOutcome, ItemCheck, ItemThresholds, ListCounts, QuarantinedItem, RawOffender, VersionRow, VersionStore,
} from './versions-types.js';
import type { DeliveryRepositories } from './delivery-types.js';

/** The §12–§13 seam (delivery-types.ts), named through this file like every other part of the seam. */
export type * from './delivery-types.js';
export { DeliveryRuns } from './delivery-types.js';
import type { PublicationFeed, VariantDemandRepository } from './warming-types.js';

export type { DemandCoding, Publication, PublicationFeed, VariantDemand, VariantDemandRepository } from './warming-types.js';

export interface StoreRecord {
  id: string;
  name: string;
  currency: string;
  url: string | null;
  company: string | null;
  created_at: Date;
}

export interface NewStore {
  id: string;
  name: string;
  currency: string;
  url: string | null;
  company: string | null;
}

export interface ApiKeyRecord {
  id: string;
  store_id: string;
  label: string | null;
  /** A short display prefix, never enough to use the key. */
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  /** What the key may open (CONTRACT §15); null: everything. */
  scopes: KeyScopes | null;
  /** From this instant on the key answers 401 expired_key; compared on every request, never written then. */
  expires_at: Date | null;
}

export interface NewApiKey {
  id: string;
  store_id: string;
  label: string | null;
  prefix: string;
  /** SHA-256 of the key value, lowercase hex. The value itself is never stored. */
  hash: string;
  scopes?: KeyScopes | null;
  expires_at?: Date | null;
}

/** A change of what a key may open or until when; an absent field stays as it is. */
export interface KeyAccessChange {
  scopes?: KeyScopes | null;
  expires_at?: Date | null;
}

export interface PriceListRecord {
  id: number;
  store_id: string;
  version: number;
  published_at: Date;
  item_count: number;
  available_count: number;
  currencies: string[];
  /** Ids of the categories the items use (every level), for YML. */
  category_ids: number[];
  /** The list whose item rows this version serves: its own id, or another's after a rollback (§10). */
  items_list_id: number;
}

export interface CategoryRecord {
  id: number;
  store_id: string;
  /** Full path, levels joined by ` / `; '' is the default category. */
  path: string;
  parent_id: number | null;
}

/** What one request needs to serve a key holder, read in one round trip. */
export interface KeyLookup {
  key: ApiKeyRecord;
  store: StoreRecord;
  latest: PriceListRecord | null;
}

/** An item with its position in the publication (0-based, the order exports keep). */
export interface SequencedItem {
  seq: number;
  item: PriceItem;
}

export interface DuplicateOffer {
  seq: number;
  offer_id: string;
}

/** Rows of a draft, in the store's own format, made by its rowReader. */
export interface ItemRows {
  bytes: Buffer;
  count: number;
}

/**
 * A publication's items read straight from their JSON text into a draft's rows, checked and
 * normalized as the domain's item rules do it (store/item-rows/native/item_rows.c). It takes
 * only items those rules take unchanged, and leaves every other one to them: a problem or a
 * value to tidy is always the domain's to tell.
 */
export interface ItemRowReader {
  /** The feed check's rules it counts (`target/rule`), in the order of ruleCounts: used only where they are the domain's rules. */
  readonly rules: readonly string[];
  /**
   * `bounds`: [start, end) pairs in `bytes`, one per item, whose seq is `firstSeq` + its index.
   * `storeCurrency` for items that name none; `maxFieldChars` the longest text (MAX_FIELD_CHARS).
   * `columns`: null for JSON texts; for CSV records (a CsvRecordFramer's), the header's names.
   */
  read(bytes: Buffer, bounds: Int32Array, firstSeq: number, storeCurrency: string, maxFieldChars: number, columns: readonly string[] | null): ItemRowsRead;
  /** Rows of its making an append takes best at a time, where more than the domain's batch of items (publishing.ts). */
  readonly rowsPerAppend?: number;
}

/** Where a CsvRecordFramer stopped, and the records it found. */
export interface CsvFrame {
  /** [start, end) pairs in the bytes, one per record, its LF left out. */
  bounds: Int32Array;
  /** Per record, the LFs from `start` to its end: its line is the line at `start` plus these. */
  lines: Int32Array;
  /** The first byte not framed: where a record not whole in the bytes begins, or the one to hand over. */
  next: number;
  /** LFs from `start` to `next`. */
  lfs: number;
  /** The record at `next` breaks the grammar or the byte limit: the domain's reader reads on from it and says why. */
  handOver: boolean;
}

/**
 * Finds a CSV publication's whole records from `start` (a record's first byte) by the domain's
 * grammar (csv-records.ts), natively (store/item-rows/native/csv_frame.c). `atEnd`: the bytes end
 * the file. It never refuses: it stops and hands over.
 */
export type CsvRecordFramer = (bytes: Buffer, start: number, atEnd: boolean, maxRecordBytes: number) => CsvFrame;

/**
 * Finds a run of a JSON array's whole items from `start` in `bytes` (the first item's first
 * byte), framed by the domain's own rules and not checked as JSON (the item's reader checks it):
 * their [start, end) pairs. It stops before anything else (the array's `]`), and before an item
 * that runs past the bytes or that it leaves to the splitter (a string or a scalar); the splitter
 * reads on from the last (store/item-rows/native/json_frame.c).
 */
export type JsonItemFramer = (bytes: Buffer, start: number) => Int32Array;

/** What a rowReader read: the rows of the items it took, and what the publication adds up about them. */
export interface ItemRowsRead {
  rows: Buffer;
  accepted: number;
  /** Indexes of the items it left to the domain's rules. */
  left: Int32Array;
  available: number;
  ruleCounts: number[];
  /** The items' currencies and category paths ('' for none) that no earlier read of this reader handed over, each ended by a NUL (not always distinct: the caller keeps a Set). */
  currencies: string;
  categories: string;
}

/** The summary a publication commits with. */
export interface PublicationSummary {
  item_count: number;
  available_count: number;
  currencies: string[];
  /** Every full category path used by the items ('' when some item has none). */
  category_paths: string[];
}

/**
 * A publication being written. Items go into a draft that no reader sees; `commit` makes it
 * the store's latest in one transaction, `abort` drops it. A draft left by a crash is
 * removed by a later `beginPublication`.
 */
export interface PublicationDraft {
  /** The draft's own list id (its items are compared with the latest by VersionStore.compare). */
  readonly id: number;
  /**
   * Appends items, and rows the draft's `rowReader` made; returns those whose offer_id is already
   * in the draft (they are not stored).
   */
  append(items: readonly SequencedItem[], rows?: readonly ItemRows[]): Promise<DuplicateOffer[]>;
  /** Reads items' JSON texts straight into this draft's rows, for the items it can; null where it was not built. */
  readonly rowReader?: ItemRowReader | null;
  /** Waits until every appended item is stored where the draft's comparison reads it; fails if any was lost. */
  appended(): Promise<void>;
  /** Without an outcome: published as latest, unguarded, with the default retention. */
  commit(summary: PublicationSummary, outcome?: CommitOutcome): Promise<PriceListRecord>;
  abort(): Promise<void>;
}

export interface LatestPriceList {
  store: StoreRecord;
  list: PriceListRecord;
}

export interface ReadItemsOptions {
  onlyAvailable: boolean;
  /** Items per batch; the reader yields between batches. */
  batchSize?: number;
  /**
   * False when the reader needs only the legacy columns (offer_id … url): the other fields
   * come back null and their JSON is not read or parsed. Default true.
   */
  withExtra?: boolean;
}

/** The shops (tenants). */
export interface StoreRepository {
  create(store: NewStore): Promise<StoreRecord>;
  get(id: string): Promise<StoreRecord | null>;
  list(): Promise<StoreRecord[]>;
}

export interface KeyRepository {
  insert(key: NewApiKey): Promise<ApiKeyRecord>;
  /** The key by its hash, with its store and the store's latest price list. */
  findByHash(hash: string): Promise<KeyLookup | null>;
  get(id: string): Promise<ApiKeyRecord | null>;
  list(storeId: string): Promise<ApiKeyRecord[]>;
  /**
   * Records the key's use; written in the background, in batches (the promise settles when it is
   * written: callers on a request path do not wait for it).
   */
  touch(id: string, at: Date): Promise<void>;
  /** Sets revoked_at if not yet set; returns the key, or null when there is no such key. */
  revoke(id: string, at: Date): Promise<ApiKeyRecord | null>;
  /** Changes a key's scopes or expiry; returns the key, or null when there is no such key. */
  updateAccess(id: string, change: KeyAccessChange): Promise<ApiKeyRecord | null>;
  /**
   * In one transaction: inserts `replacement` and makes key `oldId` expire at `oldExpiresAt`
   * (or keeps its earlier expiry). Null, and nothing written, when there is no such key.
   */
  rotate(oldId: string, replacement: NewApiKey, oldExpiresAt: Date): Promise<{ old: ApiKeyRecord; replacement: ApiKeyRecord } | null>;
}

export interface ProfileRepository {
  /** Creates a profile, or replaces profile `id` of the same store (revision + 1). Null when `id` is not this store's. */
  put(storeId: string, definition: ProfileDefinition, id?: number): Promise<Profile | null>;
  /**
   * Store `storeId`'s profile `id`, or null. Looked up by (store, id) in one query, so another
   * store's id and an unknown id miss alike, with the same work (no timing tells them apart).
   */
  get(storeId: string, id: number): Promise<Profile | null>;
  list(storeId: string): Promise<Profile[]>;
}

export interface PriceListRepository {
  beginPublication(storeId: string): Promise<PublicationDraft>;
  latest(storeId: string): Promise<PriceListRecord | null>;
  /** Every store that has published, with its latest list, in one query. */
  listLatest(): Promise<LatestPriceList[]>;
  /** The categories with these ids (CategoryRecord.path resolves names and parents). */
  categories(storeId: string, ids: readonly number[]): Promise<CategoryRecord[]>;
  /** The list's items in publication order, in batches. */
  readItems(priceListId: number, options: ReadItemsOptions): AsyncIterable<PriceItem[]>;
  /**
   * The list's items as records built by the database itself (UTF-8, publication order, chunks
   * of whole records): CSV/TSV records (model/delimited-record.ts), JSON or XML items
   * (model/json-record.ts, model/xml-record.ts), YML offers (model/yml-record.ts). Null when the
   * spec reads a field the database cannot read itself (stored-fields.ts): the writer renders those.
   */
  renderRecords(priceListId: number, spec: RecordSpec, options: Pick<ReadItemsOptions, 'onlyAvailable'>): AsyncIterable<Uint8Array> | null;
  /**
   * Whether the list (a version's own row) still exists. A list's row is deleted before its item
   * rows (store/sql/purge.ts): a reader that asks this after its last page knows whether rows
   * may have gone under it.
   */
  exists(priceListId: number): Promise<boolean>;
  /** Deletes every store's drafts left stale by a crash (a timer's work); returns how many. */
  sweepStaleDrafts(): Promise<number>;
}

/**
 * One open database. Failures of the database itself (unreachable, busy, timed out) reach
 * callers as `AppError('unavailable')`; `openDatabase` has started its threads already.
 */
export interface Database {
  readonly dialect: 'sqlite' | 'postgres';
  readonly stores: StoreRepository;
  readonly keys: KeyRepository;
  readonly profiles: ProfileRepository;
  readonly priceLists: PriceListRepository;
  /** History, the guard, quarantine and rollback (CONTRACT §10). */
  readonly versions: VersionStore;
  /** The changes feed: what differs between two versions (CONTRACT §11). */
  readonly changes: ChangesRepository;
  /** The delivery ledger, webhooks and their outbox (CONTRACT §12–§13). */
  readonly deliveries: DeliveryRepositories;
  migrate(): Promise<void>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  /** Operations (readiness, doctor): migrations not yet applied; throws when the database cannot be reached. */
  pendingMigrations(): Promise<number>;
  /** Operations: SQLite's journal mode (`wal` expected); PostgreSQL's pool use (metrics). */
  journalMode?(): string;
  /** Operations: SQLite's CSV/TSV, JSON and XML pages built by the C extension (true) or by SQL (false, the extension not built). */
  nativeRecords?(): boolean;
  /** Operations: JSON, NDJSON and CSV publications read by the native item reader (true), or by JavaScript (false: not built, or an in-memory SQLite). */
  nativeItemReader?(): boolean;
  /** The native framer of JSON arrays' items, for readSource (publication-source.ts); null where it was not built. */
  jsonItemFramer?(): JsonItemFramer | null;
  /** The native framer of CSV records, for readSource; null where it was not built. */
  csvRecordFramer?(): CsvRecordFramer | null;
  poolUse?(): { total: number; idle: number; waiting: number; max: number };
  close(): Promise<void>;

  /** The variants asked for lately, shared by every instance (render-cache warming, warming-types.ts). */
  readonly demand: VariantDemandRepository;
  /** A feed of publications committed by any process; the caller starts and closes it. */
  publicationFeed(): PublicationFeed;
}

