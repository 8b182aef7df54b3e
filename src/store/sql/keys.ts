import { scopesToJson } from '../../model/key-scopes.js';
import type { ApiKeyRecord, KeyAccessChange, KeyLookup, KeyRepository, NewApiKey } from '../types.js';
import { inBackgroundTogether, statementRows, type ColumnKind, type Query, type SqlDialect } from './dialect.js';
import { KEY_COLUMNS, KEY_LOOKUP_SQL, keyLookupManySql, type RowMappers } from './rows.js';
import { GenerationLookups, type LookupsAt } from './generation-lookups.js';
import { turnBatch } from './turn-batch.js';

/** A turn's touches: key id, time. */
const TOUCH_KINDS: readonly ColumnKind[] = ['text', 'time'];
/** Touches a statement at most. */
const TOUCHES_PER_STATEMENT = 100;
/** The look-ups' generation alone (generation-lookups.ts). */
const GENERATION_SQL = 'SELECT n AS lookup_generation FROM key_lookup_generation';

export class SqlKeyRepository implements KeyRepository {
  /** The touches of a turn, the latest time per key, written together (touch). */
  private readonly touchInTurn = turnBatch((touches: ReadonlyMap<string, Date>) => this.writeTouches(touches));
  /** Without SQLite's remembered look-ups: those kept while the look-ups' generation stays put. */
  private readonly remembered = new GenerationLookups((hashes) => this.lookUpManyAt(hashes));
  /** The look-ups of a turn, asked together (lookUpInTurn). */
  private readonly lookUpInTurnBatch = turnBatch((hashes: ReadonlyMap<string, true>) => this.remembered.lookUp([...hashes.keys()]));
  private readonly lookUpManyAtSql: string;

  constructor(private readonly d: SqlDialect, private readonly map: RowMappers) {
    // The counter and the look-ups in one statement, so in one snapshot; the counter's row even
    // when none is found (a turn that asks for no key reads the counter alone: lookUpManyAt).
    this.lookUpManyAtSql = `SELECT g.n AS lookup_generation, l.* FROM key_lookup_generation g
      LEFT JOIN (${keyLookupManySql(d.anyText('k.hash'))}) l ON true`;
  }

  async insert(key: NewApiKey): Promise<ApiKeyRecord> {
    const { rows } = await this.d.query(this.insertQuery(key));
    return this.map.key(rows[0]);
  }

  private insertQuery(key: NewApiKey): Query {
    return {
      sql: `INSERT INTO api_keys (id, store_id, label, prefix, hash, created_at, scopes, expires_at) VALUES (?, ?, ?, ?, ?, ${this.d.now}, ?, ?) RETURNING ${KEY_COLUMNS}`,
      params: [key.id, key.store_id, key.label, key.prefix, key.hash, scopesToJson(key.scopes ?? null), key.expires_at ? this.d.timeParam(key.expires_at) : null],
    };
  }

  async findByHash(hash: string): Promise<KeyLookup | null> {
    return this.d.keyLookups ? this.d.keyLookups.find(hash, () => this.lookUp(hash)) : this.lookUpInTurn(hash);
  }

  /**
   * Without SQLite's remembered look-ups (PostgreSQL: another instance may revoke a key at any
   * moment), every request asks the database, but the requests of one event-loop turn ask
   * together: one query for every key asked in it, sent in the turn's check phase, after the poll
   * phase has read every ready socket, and reading only the look-ups' generation when every key
   * of the turn is remembered (generation-lookups.ts). Each request still gets a read made after
   * it arrived, so a revocation committed before it was sent is seen (CONTRACT §4); a round trip
   * per 304 was most of a 304's cost on PostgreSQL (bench/RESULTS.md, "PostgreSQL 304s").
   */
  private async lookUpInTurn(hash: string): Promise<KeyLookup | null> {
    return (await this.lookUpInTurnBatch(hash, true)).get(hash) ?? null;
  }

  private async lookUpManyAt(hashes: readonly string[]): Promise<LookupsAt> {
    const found = new Map<string, KeyLookup>();
    if (hashes.length === 0) {
      // Every key of the turn remembered, a busy server's usual turn: the counter alone. The
      // look-up's join with no key to find cost PostgreSQL its planning and a 24-column answer each
      // turn: a turn's look-up of a remembered key took ~1 ms, now ~65 µs (bench/RESULTS.md,
      // "2026-12-07"). Both statements kept prepared.
      const { rows } = await this.d.query({ sql: GENERATION_SQL, params: [], request: true, prepared: 'key_lookup_generation' });
      return { generation: Number(rows[0].lookup_generation), found };
    }
    const { rows } = await this.d.query({ sql: this.lookUpManyAtSql, params: [this.d.texts(hashes)], request: true, prepared: 'key_lookups' });
    for (const row of rows) if (row.k_hash !== null) found.set(row.k_hash as string, this.map.keyLookup(row));
    return { generation: Number(rows[0].lookup_generation), found };
  }

  private async lookUp(hash: string): Promise<KeyLookup | null> {
    const { rows } = await this.d.query({ sql: KEY_LOOKUP_SQL, params: [hash], request: true });
    return rows[0] ? this.map.keyLookup(rows[0]) : null;
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.d.query({ sql: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`, params: [id] });
    return rows[0] ? this.map.key(rows[0]) : null;
  }

  async list(storeId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.d.query({ sql: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE store_id = ? ORDER BY created_at, id`, params: [storeId] });
    return rows.map(this.map.key);
  }

  /**
   * Remembered at once (this process's look-ups see the new time); written off the request path
   * (red-team finding #20.7: a request once waited here on SQLite's write lock while a CLI
   * publication held it, and the whole event loop with it). The touches of one turn of the event
   * loop go as one batch, on SQLite through the write thread. The promise is the batch's write,
   * for tests and shutdown; a request never waits for it.
   */
  touch(id: string, at: Date): Promise<void> {
    (this.d.keyLookups ?? this.remembered).touched(id, at);
    return this.touchInTurn(id, at);
  }

  /**
   * A statement for up to TOUCHES_PER_STATEMENT keys, not one a key: on PostgreSQL each
   * statement is a round trip holding a pooled connection, and a key is touched by its first
   * request a minute or more after its last (every request of a fetcher revalidating every 15
   * minutes), so a server answering many keys touches many in a turn.
   */
  private async writeTouches(touches: ReadonlyMap<string, Date>): Promise<void> {
    const all = [...touches];
    const queries: Query[] = [];
    for (const [start, end] of statementRows(this.d, all.length, TOUCHES_PER_STATEMENT)) {
      const chunk = all.slice(start, end);
      const values = chunk.flatMap(([id, at]) => [id, this.d.timeParam(at)]);
      queries.push({
        sql: `UPDATE api_keys SET last_used_at = v.column2 FROM (${this.d.rowsQuery(TOUCH_KINDS, chunk.length)}) AS v WHERE api_keys.id = v.column1`,
        params: this.d.rowsParams(TOUCH_KINDS, values),
        prepared: 'key_touches',
      });
    }
    await inBackgroundTogether(this.d, queries);
  }

  async revoke(id: string, at: Date): Promise<ApiKeyRecord | null> {
    await this.d.query({ sql: 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', params: [this.d.timeParam(at), id] });
    this.d.keyLookups?.invalidate();
    return this.get(id);
  }

  async updateAccess(id: string, change: KeyAccessChange): Promise<ApiKeyRecord | null> {
    const sets: string[] = [];
    const params: unknown[] = [];
    if (change.scopes !== undefined) {
      sets.push('scopes = ?');
      params.push(scopesToJson(change.scopes));
    }
    if (change.expires_at !== undefined) {
      sets.push('expires_at = ?');
      params.push(change.expires_at ? this.d.timeParam(change.expires_at) : null);
    }
    if (sets.length > 0) await this.d.query({ sql: `UPDATE api_keys SET ${sets.join(', ')} WHERE id = ?`, params: [...params, id] });
    // This connection's own write: SQLite's remembered look-ups would not see it otherwise.
    this.d.keyLookups?.invalidate();
    return this.get(id);
  }

  async rotate(oldId: string, replacement: NewApiKey, oldExpiresAt: Date): Promise<{ old: ApiKeyRecord; replacement: ApiKeyRecord } | null> {
    const at = this.d.timeParam(oldExpiresAt);
    const insert = this.insertQuery(replacement);
    const map = this.map;
    try {
      return await this.d.transaction((function* () {
        // The earlier of the two expiries: a rotation never extends a key's life.
        const old = yield {
          sql: `UPDATE api_keys SET expires_at = CASE WHEN expires_at IS NOT NULL AND expires_at < ? THEN expires_at ELSE ? END WHERE id = ? RETURNING ${KEY_COLUMNS}`,
          params: [at, at, oldId],
        };
        if (old.rows.length === 0) return null;
        const inserted = yield insert;
        return { old: map.key(old.rows[0]), replacement: map.key(inserted.rows[0]) };
      })());
    } finally {
      this.d.keyLookups?.invalidate();
    }
  }
}
