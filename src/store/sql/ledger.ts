import type { ConsumerRow, DeliveryRecord, LedgerCursor, LedgerRepository, StoredDelivery } from '../delivery-types.js';
import { bit, type DeliverySql, type Row } from './delivery-sql.js';
import { inBackground } from './dialect.js';

const COLUMNS = [
  'store_id', 'key_id', 'at', 'address', 'format', 'profile_id', 'only_available', 'version', 'status', 'bytes_sent', 'finished',
  'duration_ms', 'client_class', 'client_address',
] as const;
const ROW_PLACEHOLDERS = `(${COLUMNS.map(() => '?').join(', ')})`;
/** Records per INSERT: 14 columns × 500 stays far below SQLite's and PostgreSQL's parameter bounds. */
const ROWS_PER_INSERT = 500;

/** A delivery that gave the consumer the list: a whole answer, 200/206/304. */
const OK = 'finished AND status IN (200, 206, 304)';

/** The delivery ledger (CONTRACT §12), one SQL text for both dialects. */
export class SqlLedgerRepository implements LedgerRepository {
  constructor(private readonly d: DeliverySql) {}

  async insert(records: readonly DeliveryRecord[]): Promise<void> {
    for (let start = 0; start < records.length; start += ROWS_PER_INSERT) {
      const chunk = records.slice(start, start + ROWS_PER_INSERT);
      const params: unknown[] = [];
      for (const r of chunk) {
        params.push(
          r.store_id, r.key_id, this.d.timeParam(r.at), r.address, r.format, r.profile_id, bit(r.only_available), r.version, r.status,
          r.bytes_sent, bit(r.finished), r.duration_ms, r.client_class, r.client_address,
        );
      }
      await inBackground(this.d, { sql: `INSERT INTO delivery_ledger (${COLUMNS.join(', ')}) VALUES ${chunk.map(() => ROW_PLACEHOLDERS).join(', ')}`, params });
    }
  }

  async page(storeId: string, limit: number, before: LedgerCursor | null): Promise<StoredDelivery[]> {
    const at = before && this.d.timeParam(before.at);
    const { rows } = await this.d.query(before
      ? {
        sql: `SELECT * FROM delivery_ledger WHERE store_id = ? AND (at < ? OR (at = ? AND id < ?)) ORDER BY at DESC, id DESC LIMIT ?`,
        params: [storeId, at, at, before.id, limit],
      }
      : { sql: 'SELECT * FROM delivery_ledger WHERE store_id = ? ORDER BY at DESC, id DESC LIMIT ?', params: [storeId, limit] });
    return rows.map((r) => this.delivery(r));
  }

  async consumers(storeId: string, since: Date, dayAgo: Date, limit: number): Promise<ConsumerRow[]> {
    // One pass over the store's window: the aggregates per consumer, then its last three
    // deliveries (the last one's status, and whether all three failed) from a window function.
    const { rows } = await this.d.query({
      sql: `WITH recent AS (
              SELECT client_class, client_address, at, status, version, finished,
                     row_number() OVER (PARTITION BY client_class, client_address ORDER BY at DESC, id DESC) AS n
                FROM delivery_ledger WHERE store_id = ? AND at >= ?)
            SELECT client_class, client_address, max(at) AS last_fetch_at,
                   max(CASE WHEN ${OK} THEN version END) AS last_version,
                   max(CASE WHEN n = 1 THEN status END) AS last_status,
                   sum(CASE WHEN at >= ? THEN 1 ELSE 0 END) AS fetches_24h,
                   sum(CASE WHEN n <= 3 THEN 1 ELSE 0 END) AS last_three,
                   sum(CASE WHEN n <= 3 AND ${OK} THEN 1 ELSE 0 END) AS last_three_ok
              FROM recent GROUP BY client_class, client_address ORDER BY max(at) DESC LIMIT ?`,
      params: [storeId, this.d.timeParam(since), this.d.timeParam(dayAgo), limit],
    });
    return rows.map((r) => ({
      client_class: String(r.client_class),
      client_address: String(r.client_address),
      last_fetch_at: this.d.time(r.last_fetch_at),
      last_version: r.last_version === null ? null : Number(r.last_version),
      last_status: Number(r.last_status),
      fetches_24h: Number(r.fetches_24h),
      failing: Number(r.last_three) === 3 && Number(r.last_three_ok) === 0,
    }));
  }

  async deleteOlderThan(before: Date, limit: number): Promise<number> {
    // Small batches by id, so a large backlog never holds the write lock for long.
    const { changes } = await this.d.query({
      // Oldest ids first: records arrive in time order (give or take a batch), so the scan stops early without an index on `at`.
      sql: 'DELETE FROM delivery_ledger WHERE id IN (SELECT id FROM delivery_ledger WHERE at < ? ORDER BY id LIMIT ?)',
      params: [this.d.timeParam(before), limit],
    });
    return changes;
  }

  private delivery(r: Row): StoredDelivery {
    return {
      id: Number(r.id),
      store_id: String(r.store_id),
      key_id: String(r.key_id),
      at: this.d.time(r.at),
      address: String(r.address),
      format: (r.format as string | null) ?? null,
      profile_id: r.profile_id === null ? null : Number(r.profile_id),
      only_available: r.only_available === null ? null : Boolean(r.only_available),
      version: r.version === null ? null : Number(r.version),
      status: Number(r.status),
      bytes_sent: Number(r.bytes_sent),
      finished: Boolean(r.finished),
      duration_ms: Number(r.duration_ms),
      client_class: String(r.client_class),
      client_address: String(r.client_address),
    };
  }
}
