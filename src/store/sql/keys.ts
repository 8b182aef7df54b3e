import type { ApiKeyRecord, KeyLookup, KeyRepository, NewApiKey } from '../types.js';
import type { SqlDialect } from './dialect.js';
import { KEY_COLUMNS, KEY_LOOKUP_SQL, type RowMappers } from './rows.js';

export class SqlKeyRepository implements KeyRepository {
  constructor(private readonly d: SqlDialect, private readonly map: RowMappers) {}

  async insert(key: NewApiKey): Promise<ApiKeyRecord> {
    const { rows } = await this.d.query({
      sql: `INSERT INTO api_keys (id, store_id, label, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ${this.d.now}) RETURNING ${KEY_COLUMNS}`,
      params: [key.id, key.store_id, key.label, key.prefix, key.hash],
    });
    return this.map.key(rows[0]);
  }

  async findByHash(hash: string): Promise<KeyLookup | null> {
    const remembered = this.d.keyLookups?.get(hash);
    if (remembered) return remembered;
    const { rows } = await this.d.query({ sql: KEY_LOOKUP_SQL, params: [hash], request: true });
    if (!rows[0]) return null;
    const lookup = this.map.keyLookup(rows[0]);
    this.d.keyLookups?.set(hash, lookup);
    return lookup;
  }

  async get(id: string): Promise<ApiKeyRecord | null> {
    const { rows } = await this.d.query({ sql: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`, params: [id] });
    return rows[0] ? this.map.key(rows[0]) : null;
  }

  async list(storeId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.d.query({ sql: `SELECT ${KEY_COLUMNS} FROM api_keys WHERE store_id = ? ORDER BY created_at, id`, params: [storeId] });
    return rows.map(this.map.key);
  }

  async touch(id: string, at: Date): Promise<void> {
    await this.d.query({ sql: 'UPDATE api_keys SET last_used_at = ? WHERE id = ?', params: [this.d.timeParam(at), id], request: true });
    this.d.keyLookups?.touched(id, at);
  }

  async revoke(id: string, at: Date): Promise<ApiKeyRecord | null> {
    await this.d.query({ sql: 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', params: [this.d.timeParam(at), id] });
    this.d.keyLookups?.invalidate();
    return this.get(id);
  }
}
