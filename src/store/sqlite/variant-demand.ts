import type Database from 'better-sqlite3';
import { NO_PROFILE, type DemandCoding, type VariantDemand, type VariantDemandRepository } from '../warming-types.js';

const UPSERT = `INSERT INTO variant_demand (store_id, endpoint, format, profile_id, only_available, coding, last_asked_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (store_id, endpoint, format, profile_id, only_available, coding)
                DO UPDATE SET last_asked_at = max(last_asked_at, excluded.last_asked_at)`;

type Row = { store_id: string; endpoint: 'prices' | 'summary'; format: string; profile_id: number; only_available: number; coding: DemandCoding; last_asked_at: number };

/** variant_demand on SQLite (times in epoch milliseconds, as every SQLite time here). */
export class SqliteVariantDemand implements VariantDemandRepository {
  constructor(private readonly db: Database.Database) {}

  async record(demands: readonly VariantDemand[]): Promise<void> {
    if (demands.length === 0) return;
    const upsert = this.db.prepare(UPSERT);
    this.db.transaction(() => {
      for (const d of demands) {
        upsert.run(d.storeId, d.endpoint, d.format, d.profileId ?? NO_PROFILE, d.onlyAvailable ? 1 : 0, d.coding, d.lastAskedAt.getTime());
      }
    })();
  }

  async hot(storeId: string, since: Date): Promise<VariantDemand[]> {
    const rows = this.db
      .prepare('SELECT * FROM variant_demand WHERE store_id = ? AND last_asked_at >= ? ORDER BY last_asked_at DESC, format, coding')
      .all(storeId, since.getTime()) as Row[];
    return rows.map((r) => ({
      storeId: r.store_id, endpoint: r.endpoint, format: r.format, profileId: r.profile_id === NO_PROFILE ? null : r.profile_id,
      onlyAvailable: r.only_available === 1, coding: r.coding, lastAskedAt: new Date(r.last_asked_at),
    }));
  }

  async expire(before: Date): Promise<number> {
    return this.db.prepare('DELETE FROM variant_demand WHERE last_asked_at < ?').run(before.getTime()).changes;
  }
}
