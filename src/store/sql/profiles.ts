import type { Profile, ProfileDefinition } from '../../model/profile.js';
import type { ProfileRepository } from '../types.js';
import type { SqlDialect } from './dialect.js';
import type { RowMappers } from './rows.js';

export class SqlProfileRepository implements ProfileRepository {
  constructor(private readonly d: SqlDialect, private readonly map: RowMappers) {}

  async put(storeId: string, definition: ProfileDefinition, id?: number): Promise<Profile | null> {
    const json = JSON.stringify(definition);
    const { rows } = id === undefined
      ? await this.d.query({
        sql: `INSERT INTO profiles (store_id, revision, definition, updated_at) VALUES (?, 1, ?, ${this.d.now}) RETURNING *`,
        params: [storeId, json],
      })
      : await this.d.query({
        sql: `UPDATE profiles SET revision = revision + 1, definition = ?, updated_at = ${this.d.now} WHERE id = ? AND store_id = ? RETURNING *`,
        params: [json, id, storeId],
      });
    return rows[0] ? this.map.profile(rows[0]) : null;
  }

  async get(storeId: string, id: number): Promise<Profile | null> {
    const { rows } = await this.d.query({ sql: 'SELECT * FROM profiles WHERE id = ? AND store_id = ?', params: [id, storeId], request: true });
    return rows[0] ? this.map.profile(rows[0]) : null;
  }

  async list(storeId: string): Promise<Profile[]> {
    return (await this.d.query({ sql: 'SELECT * FROM profiles WHERE store_id = ? ORDER BY id', params: [storeId], request: true })).rows.map(this.map.profile);
  }
}
