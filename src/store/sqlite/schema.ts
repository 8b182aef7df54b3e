/**
 * SQLite migrations, applied in order; each runs once (schema_migrations records it).
 * Times are integer milliseconds since the epoch; money is integer minor units.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE stores (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    currency TEXT NOT NULL,
    url TEXT,
    company TEXT,
    created_at INTEGER NOT NULL,
    last_version INTEGER NOT NULL DEFAULT 0,
    latest_price_list_id INTEGER
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    store_id TEXT NOT NULL REFERENCES stores(id),
    label TEXT,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
  );
  CREATE INDEX api_keys_store ON api_keys(store_id);
  CREATE TABLE profiles (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    store_id TEXT NOT NULL REFERENCES stores(id),
    revision INTEGER NOT NULL,
    definition TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX profiles_store ON profiles(store_id);
  CREATE TABLE categories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    store_id TEXT NOT NULL REFERENCES stores(id),
    path TEXT NOT NULL,
    parent_id INTEGER REFERENCES categories(id),
    UNIQUE (store_id, path)
  );
  CREATE TABLE price_lists (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    store_id TEXT NOT NULL REFERENCES stores(id),
    status TEXT NOT NULL CHECK (status IN ('draft', 'published')),
    version INTEGER,
    created_at INTEGER NOT NULL,
    published_at INTEGER,
    superseded_at INTEGER,
    item_count INTEGER,
    available_count INTEGER,
    currencies TEXT,
    category_ids TEXT
  );
  CREATE INDEX price_lists_store ON price_lists(store_id, status);
  CREATE TABLE price_items (
    price_list_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    offer_id TEXT NOT NULL,
    name TEXT NOT NULL,
    price INTEGER NOT NULL,
    old_price INTEGER,
    currency TEXT NOT NULL,
    available INTEGER NOT NULL,
    quantity INTEGER,
    url TEXT,
    extra TEXT,
    PRIMARY KEY (price_list_id, seq)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX price_items_offer ON price_items(price_list_id, offer_id);
  `,
  // Which text fields of an item need no CSV quoting for the common delimiters (delimited-sql.ts);
  // NULL for rows published before it: they take the full test.
  `ALTER TABLE price_items ADD COLUMN quote_free INTEGER`,
  // Render-cache warming (issue #16): the variants asked for lately, and a log of publications
  // (one row per store, written by a trigger in the publication's transaction, so a commit by
  // any process is in it) that the warmer reads after the WAL-index header tells of a commit.
  `
  CREATE TABLE variant_demand (
    store_id TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    format TEXT NOT NULL,
    profile_id INTEGER NOT NULL,
    only_available INTEGER NOT NULL,
    coding TEXT NOT NULL,
    last_asked_at INTEGER NOT NULL,
    PRIMARY KEY (store_id, endpoint, format, profile_id, only_available, coding)
  ) WITHOUT ROWID;
  CREATE INDEX variant_demand_age ON variant_demand(last_asked_at);
  CREATE TABLE publication_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    store_id TEXT NOT NULL,
    version INTEGER NOT NULL
  );
  CREATE INDEX publication_log_store ON publication_log(store_id);
  CREATE TRIGGER publication_logged AFTER UPDATE OF latest_price_list_id ON stores
    WHEN NEW.latest_price_list_id IS NOT OLD.latest_price_list_id
  BEGIN
    DELETE FROM publication_log WHERE store_id = NEW.id;
    INSERT INTO publication_log (store_id, version) VALUES (NEW.id, NEW.last_version);
  END;
  `,
];
