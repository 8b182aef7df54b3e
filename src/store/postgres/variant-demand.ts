import type pg from 'pg';
import { NO_PROFILE, type DemandCoding, type VariantDemand, type VariantDemandRepository } from '../warming-types.js';

type Row = { store_id: string; endpoint: 'prices' | 'summary'; format: string; profile_id: number; only_available: boolean; coding: DemandCoding; last_asked_at: Date };

/** variant_demand on PostgreSQL: a batch is one statement (one array parameter per column). */
export class PostgresVariantDemand implements VariantDemandRepository {
  constructor(private readonly pool: pg.Pool) {}

  async record(demands: readonly VariantDemand[]): Promise<void> {
    if (demands.length === 0) return;
    // Two rows of one batch for the same variant would make ON CONFLICT touch a row twice: keep the newest.
    const newest = new Map<string, VariantDemand>();
    for (const d of demands) {
      const id = JSON.stringify([d.storeId, d.endpoint, d.format, d.profileId, d.onlyAvailable, d.coding]);
      const seen = newest.get(id);
      if (!seen || seen.lastAskedAt < d.lastAskedAt) newest.set(id, d);
    }
    const rows = [...newest.values()];
    await this.pool.query(
      `INSERT INTO variant_demand (store_id, endpoint, format, profile_id, only_available, coding, last_asked_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::boolean[], $6::text[], $7::timestamptz[])
       ON CONFLICT (store_id, endpoint, format, profile_id, only_available, coding)
       DO UPDATE SET last_asked_at = greatest(variant_demand.last_asked_at, excluded.last_asked_at)`,
      [
        rows.map((d) => d.storeId), rows.map((d) => d.endpoint), rows.map((d) => d.format), rows.map((d) => d.profileId ?? NO_PROFILE),
        rows.map((d) => d.onlyAvailable), rows.map((d) => d.coding), rows.map((d) => d.lastAskedAt),
      ],
    );
  }

  async hot(storeId: string, since: Date): Promise<VariantDemand[]> {
    const { rows } = await this.pool.query<Row>(
      'SELECT * FROM variant_demand WHERE store_id = $1 AND last_asked_at >= $2 ORDER BY last_asked_at DESC, format, coding',
      [storeId, since],
    );
    return rows.map((r) => ({
      storeId: r.store_id, endpoint: r.endpoint, format: r.format, profileId: Number(r.profile_id) === NO_PROFILE ? null : Number(r.profile_id),
      onlyAvailable: r.only_available, coding: r.coding, lastAskedAt: r.last_asked_at,
    }));
  }

  async expire(before: Date): Promise<number> {
    return (await this.pool.query('DELETE FROM variant_demand WHERE last_asked_at < $1', [before])).rowCount ?? 0;
  }
}
