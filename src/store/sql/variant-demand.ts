import { NO_PROFILE, type DemandCoding, type VariantDemand, type VariantDemandRepository } from '../warming-types.js';
import type { Row, SqlDialect, Steps } from './dialect.js';

/*
 * variant_demand, written once for both dialects. `only_available` is bound as 1/0 (SQLite has no
 * boolean; PostgreSQL's boolean takes '1'/'0') and read back as either form. The update keeps
 * the later time with CASE, which both dialects spell alike (SQLite's max(), PostgreSQL's greatest()).
 */
const UPSERT = `INSERT INTO variant_demand (store_id, endpoint, format, profile_id, only_available, coding, last_asked_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (store_id, endpoint, format, profile_id, only_available, coding)
                DO UPDATE SET last_asked_at = CASE WHEN excluded.last_asked_at > variant_demand.last_asked_at
                                                   THEN excluded.last_asked_at ELSE variant_demand.last_asked_at END`;

export class SqlVariantDemandRepository implements VariantDemandRepository {
  constructor(private readonly d: SqlDialect) {}

  async record(demands: readonly VariantDemand[]): Promise<void> {
    if (demands.length === 0) return;
    const d = this.d;
    // One transaction: a batch is a few rows, written every few minutes per variant at most.
    await d.transaction((function* (): Steps<void> {
      for (const x of demands) {
        yield { sql: UPSERT, params: [x.storeId, x.endpoint, x.format, x.profileId ?? NO_PROFILE, x.onlyAvailable ? 1 : 0, x.coding, d.timeParam(x.lastAskedAt)] };
      }
    })());
  }

  async hot(storeId: string, since: Date): Promise<VariantDemand[]> {
    const { rows } = await this.d.query({
      sql: 'SELECT * FROM variant_demand WHERE store_id = ? AND last_asked_at >= ? ORDER BY last_asked_at DESC, format, coding',
      params: [storeId, this.d.timeParam(since)],
    });
    return rows.map((r: Row) => ({
      storeId: r.store_id as string,
      endpoint: r.endpoint as VariantDemand['endpoint'],
      format: r.format as string,
      profileId: Number(r.profile_id) === NO_PROFILE ? null : Number(r.profile_id),
      onlyAvailable: r.only_available === true || Number(r.only_available) === 1,
      coding: r.coding as DemandCoding,
      lastAskedAt: this.d.time(r.last_asked_at),
    }));
  }

  async expire(before: Date): Promise<number> {
    return (await this.d.query({ sql: 'DELETE FROM variant_demand WHERE last_asked_at < ?', params: [this.d.timeParam(before)] })).changes;
  }
}
