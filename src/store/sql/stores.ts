import type { NewStore, StoreRecord, StoreRepository } from '../types.js';
import type { SqlDialect } from './dialect.js';
import type { RowMappers } from './rows.js';

export class SqlStoreRepository implements StoreRepository {
  constructor(private readonly d: SqlDialect, private readonly map: RowMappers) {}

  async create(store: NewStore): Promise<StoreRecord> {
    const { rows } = await this.d.query({
      sql: `INSERT INTO stores (id, name, currency, url, company, created_at) VALUES (?, ?, ?, ?, ?, ${this.d.now}) RETURNING *`,
      params: [store.id, store.name, store.currency, store.url, store.company],
    });
    return this.map.store(rows[0]);
  }

  async get(id: string): Promise<StoreRecord | null> {
    const { rows } = await this.d.query({ sql: 'SELECT * FROM stores WHERE id = ?', params: [id] });
    return rows[0] ? this.map.store(rows[0]) : null;
  }

  async list(): Promise<StoreRecord[]> {
    return (await this.d.query({ sql: 'SELECT * FROM stores ORDER BY id', params: [] })).rows.map(this.map.store);
  }
}
