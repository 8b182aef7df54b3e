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
  // Which text fields of an item need no CSV quoting for the common delimiters (delimited-sql.ts),
  // and since, no XML escaping (xml-sql.ts); NULL for rows published before it: they take the full test.
  `ALTER TABLE price_items ADD COLUMN quote_free INTEGER`,
  // CONTRACT §10: versions, the guard, quarantine, rollback (store/versions-types.ts).
  // held: stored but not served; items_of: a rollback serves another list's rows (none copied);
  // retired_at: out of retention, unserved, deleted after the grace period; diff: JSON.
  `
  ALTER TABLE price_lists ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE price_lists ADD COLUMN source TEXT NOT NULL DEFAULT 'publish';
  ALTER TABLE price_lists ADD COLUMN items_of INTEGER;
  ALTER TABLE price_lists ADD COLUMN diff TEXT;
  ALTER TABLE price_lists ADD COLUMN retired_at INTEGER;
  CREATE INDEX price_lists_version ON price_lists(store_id, version);
  CREATE INDEX price_lists_items_of ON price_lists(items_of) WHERE items_of IS NOT NULL;
  CREATE TABLE guard_policies (
    store_id TEXT PRIMARY KEY REFERENCES stores(id),
    max_removed_pct INTEGER NOT NULL,
    max_price_drop_pct INTEGER NOT NULL,
    max_price_rise_pct INTEGER NOT NULL,
    min_items INTEGER NOT NULL,
    zero_price TEXT NOT NULL CHECK (zero_price IN ('hold', 'allow')),
    updated_at INTEGER NOT NULL
  );
  -- The proposed values of quarantined items (a price_items row), kept with the version that
  -- serves their previous values; served_price is that previous price (NULL: a new item, left out).
  CREATE TABLE quarantined_items (
    price_list_id INTEGER NOT NULL,
    offer_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    served_price INTEGER,
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    price INTEGER NOT NULL,
    old_price INTEGER,
    currency TEXT NOT NULL,
    available INTEGER NOT NULL,
    quantity INTEGER,
    url TEXT,
    extra TEXT,
    quote_free INTEGER,
    PRIMARY KEY (price_list_id, offer_id)
  ) WITHOUT ROWID;
  `,
  // Keys that open less (CONTRACT §15): scopes as JSON text (NULL: everything), expiry in ms.
  `ALTER TABLE api_keys ADD COLUMN scopes TEXT;
   ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;`,
  // CONTRACT §12–§13: the delivery ledger, webhooks and their outbox (store/sql/ledger.ts, webhooks.ts, outbox.ts).
  `
  CREATE TABLE delivery_ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    store_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    address TEXT NOT NULL,
    format TEXT,
    profile_id INTEGER,
    only_available INTEGER,
    version INTEGER,
    status INTEGER NOT NULL,
    bytes_sent INTEGER NOT NULL,
    finished INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    client_class TEXT NOT NULL,
    client_address TEXT NOT NULL
  );
  -- One index: every write of a busy ledger pays for each (pages, consumers and retention all read by store and time, or by id).
  CREATE INDEX delivery_ledger_store ON delivery_ledger(store_id, at, id);
  CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    store_id TEXT NOT NULL REFERENCES stores(id),
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    failing_since INTEGER,
    last_error TEXT,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE INDEX webhooks_store ON webhooks(store_id);
  CREATE TABLE webhook_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    first_failure_at INTEGER,
    delivered_at INTEGER,
    last_error TEXT
  );
  CREATE INDEX webhook_outbox_queue ON webhook_outbox(webhook_id, state, id);
  CREATE TABLE consumer_alerts (
    store_id TEXT NOT NULL,
    client_class TEXT NOT NULL,
    client_address TEXT NOT NULL,
    behind_version INTEGER,
    failing_since INTEGER,
    PRIMARY KEY (store_id, client_class, client_address)
  );
  `,
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
  // Red-team finding #20.4: a list's row goes first (a reader that checks for it then knows its
  // rows may be going), its rows after it, in batches off the event loop; this queue names the
  // lists whose rows are still to delete, so a crash midway leaves work the next sweep finishes.
  `
  CREATE TABLE purged_lists (list_id INTEGER PRIMARY KEY);
  `,
  // CONTRACT §11: the offer_ids whose served row differs from the previous latest's, computed
  // once per version: at the guard's comparison for a publication (changes_base: the items it was
  // compared with), else when it becomes latest (versions.ts makeLatest); changes_known marks the
  // versions that have them (one published before this migration has none: a changes request
  // reaching back over it answers 410 since_too_old).
  `
  CREATE TABLE price_list_changes (
    price_list_id INTEGER NOT NULL,
    offer_id TEXT NOT NULL,
    -- Its row's seq in the version's items and in the items compared with (null: absent there),
    -- and copies of both rows: a request since the version before reads nothing else.
    new_seq INTEGER,
    old_seq INTEGER,
    new_name TEXT,
    new_price INTEGER,
    new_old_price INTEGER,
    new_currency TEXT,
    new_available INTEGER,
    new_quantity INTEGER,
    new_url TEXT,
    new_extra TEXT,
    old_name TEXT,
    old_price INTEGER,
    old_old_price INTEGER,
    old_currency TEXT,
    old_available INTEGER,
    old_quantity INTEGER,
    old_url TEXT,
    old_extra TEXT,
    PRIMARY KEY (price_list_id, offer_id)
  ) WITHOUT ROWID;
  ALTER TABLE price_lists ADD COLUMN changes_known INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE price_lists ADD COLUMN changes_base INTEGER;
  `,
  // The delivery ledger as runs (store/sql/ledger-runs.ts): a row holds a consumer's consecutive
  // answers of one shape, the first in its columns, the rest in \`repeated\` (a JSON array of
  // [at, bytes_sent, duration_ms]: `at` ms since the epoch then, ms after the run's first record since
  // 2026-11-26, both read by ledger-runs.ts repeatedAt); runs are read newest last record first.
  `
  ALTER TABLE delivery_ledger ADD COLUMN last_at INTEGER;
  ALTER TABLE delivery_ledger ADD COLUMN repeats INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE delivery_ledger ADD COLUMN repeated TEXT;
  UPDATE delivery_ledger SET last_at = at;
  DROP INDEX delivery_ledger_store;
  CREATE INDEX delivery_ledger_runs ON delivery_ledger(store_id, last_at, id);
  `,
  // What the key look-ups read (sql/rows.ts, KEY_LOOKUP_SQL) changed: a counter the triggers
  // raise, so the server's remembered look-ups (key-lookup-cache.ts) outlive commits that
  // change none of them — the delivery ledger's batches, keys' last_used_at — which, with a
  // fleet's keys, cleared them dozens of times a second (bench/RESULTS.md, "Commits of the
  // ledger and the touches"). Every column of KEY_LOOKUP_SQL is named here but last_used_at.
  `
  CREATE TABLE key_lookup_generation (n INTEGER NOT NULL);
  INSERT INTO key_lookup_generation (n) VALUES (0);
  CREATE TRIGGER key_lookups_key_added AFTER INSERT ON api_keys BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  CREATE TRIGGER key_lookups_key_removed AFTER DELETE ON api_keys BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  CREATE TRIGGER key_lookups_key_changed AFTER UPDATE OF id, store_id, label, prefix, hash, created_at, revoked_at, scopes, expires_at ON api_keys
    BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  CREATE TRIGGER key_lookups_store_added AFTER INSERT ON stores BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  CREATE TRIGGER key_lookups_store_removed AFTER DELETE ON stores BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  CREATE TRIGGER key_lookups_store_changed AFTER UPDATE ON stores BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  CREATE TRIGGER key_lookups_list_removed AFTER DELETE ON price_lists BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  CREATE TRIGGER key_lookups_list_changed AFTER UPDATE OF id, version, published_at, item_count, available_count, currencies, category_ids, items_of ON price_lists
    BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  `,
  // A store's change to its latest list or its lists tells which store (key_lookup_changes), so a
  // publication drops only that store's remembered look-ups, not every store's: in a storm of
  // 5,000 stores republished, every look-up was asked of the database again after each of ~130
  // commits a second (bench/RESULTS.md, 2026-11-28). Keys added, removed or changed, stores added
  // or removed, and a store's id changed still raise the generation: everything is dropped. The
  // newest 10,000 rows are kept; a reader further behind drops everything (change-signal.ts).
  `
  CREATE TABLE key_lookup_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, store_id TEXT NOT NULL);
  CREATE TRIGGER key_lookup_changes_kept AFTER INSERT ON key_lookup_changes
    BEGIN DELETE FROM key_lookup_changes WHERE seq <= NEW.seq - 10000; END;
  DROP TRIGGER key_lookups_store_changed;
  CREATE TRIGGER key_lookups_store_renamed AFTER UPDATE OF id ON stores WHEN NEW.id IS NOT OLD.id
    BEGIN UPDATE key_lookup_generation SET n = n + 1; END;
  CREATE TRIGGER key_lookups_store_changed AFTER UPDATE ON stores WHEN NEW.id IS OLD.id
    BEGIN INSERT INTO key_lookup_changes (store_id) VALUES (NEW.id); END;
  DROP TRIGGER key_lookups_list_removed;
  CREATE TRIGGER key_lookups_list_removed AFTER DELETE ON price_lists
    BEGIN INSERT INTO key_lookup_changes (store_id) VALUES (OLD.store_id); END;
  DROP TRIGGER key_lookups_list_changed;
  CREATE TRIGGER key_lookups_list_changed AFTER UPDATE OF id, version, published_at, item_count, available_count, currencies, category_ids, items_of, store_id ON price_lists
    BEGIN INSERT INTO key_lookup_changes (store_id) VALUES (OLD.store_id); INSERT INTO key_lookup_changes (store_id) SELECT NEW.store_id WHERE NEW.store_id IS NOT OLD.store_id; END;
  `,
  // The webhook sender's first look (sql/outbox.ts, claim): is any pending message due? Read
  // from an index of the pending messages alone, however many delivered ones the outbox keeps.
  `
  CREATE INDEX webhook_outbox_due ON webhook_outbox(next_attempt_at) WHERE state = 'pending';
  `,
];
