import type { ConsumerRow, DeliveryRecord, DeliveryRuns, LedgerCursor, LedgerRepository, StoredDelivery } from '../delivery-types.js';
import type { DeliverySql, Row } from './delivery-sql.js';
import { inBackgroundTogether } from './dialect.js';
import { RUN_SPAN_MS } from '../delivery-types.js';
import { newestFirst, recordsOf, repeatedAt } from './ledger-runs.js';
import { LedgerWrites } from './ledger-writes.js';

/** Runs read by a page's first statement, doubling for each next one up to the last: a run holds 1 to 1,024 records. */
const FIRST_RUNS_READ = 8;
const MOST_RUNS_READ = 512;

/** A delivery that gave the consumer the list: a whole answer, 200/206/304 (a run's records all share these). */
const OK = 'finished AND status IN (200, 206, 304)';

/** The delivery ledger (CONTRACT §12), one SQL text for both dialects; stored as runs (ledger-runs.ts). */
export class SqlLedgerRepository implements LedgerRepository {
  private readonly writes: LedgerWrites;

  constructor(private readonly d: DeliverySql) {
    this.writes = new LedgerWrites(d);
  }

  async insert(batch: DeliveryRuns): Promise<void> {
    // One commit for the batch (inBackgroundTogether says why); consumers' runs continued (ledger-writes.ts).
    await inBackgroundTogether(this.d, await this.writes.statements(batch));
  }

  /**
   * Newest first. Runs are read newest last record first; a run that holds records older than
   * the cursor started before it and ended at most RUN_SPAN_MS after it. Reading stops once
   * `limit` records are found and the next run's newest record is older than all of them.
   */
  async page(storeId: string, limit: number, before: LedgerCursor | null): Promise<StoredDelivery[]> {
    const isBefore = (r: StoredDelivery) => !before || r.at < before.at || (r.at.getTime() === before.at.getTime() && r.id < before.id);
    const bounds = before ? ' AND at <= ? AND last_at <= ?' : '';
    const boundParams = before ? [this.d.timeParam(before.at), this.d.timeParam(new Date(before.at.getTime() + RUN_SPAN_MS))] : [];
    const found: StoredDelivery[] = [];
    let after: { lastAt: unknown; id: number } | null = null;
    for (let runs = FIRST_RUNS_READ; ; runs = Math.min(2 * runs, MOST_RUNS_READ)) {
      const { rows } = await this.d.query({
        sql: `SELECT * FROM delivery_ledger WHERE store_id = ?${bounds}${after ? ' AND (last_at < ? OR (last_at = ? AND id < ?))' : ''}
              ORDER BY last_at DESC, id DESC LIMIT ?`,
        params: [storeId, ...boundParams, ...(after ? [after.lastAt, after.lastAt, after.id] : []), runs],
      });
      for (const row of rows) found.push(...this.records(row).filter(isBefore));
      found.sort(newestFirst);
      if (rows.length < runs) break;
      const last = rows[rows.length - 1];
      after = { lastAt: last.last_at, id: Number(last.id) };
      if (found.length >= limit && this.d.time(last.last_at) < found[limit - 1].at) break;
      found.length = Math.min(found.length, limit);
    }
    return found.slice(0, limit);
  }

  async consumers(storeId: string, since: Date, dayAgo: Date, limit: number): Promise<ConsumerRow[]> {
    // One pass over the store's window of runs: the aggregates per consumer; from a running count
    // of records, newest run first, the runs holding its last three records (consumer.failing).
    // A consumer's runs never interleave (ledger-runs.ts), so their order is its records' order.
    // Runs across the 24-hour line (a few at most: they end within RUN_SPAN_MS of it) are
    // counted record by record afterwards.
    const { rows } = await this.d.query({
      sql: `WITH recent AS (
              SELECT client_class, client_address, at, last_at, status, version, finished, repeats,
                     row_number() OVER newest AS n,
                     sum(repeats + 1) OVER (newest ROWS UNBOUNDED PRECEDING) - repeats - 1 AS newer
                FROM delivery_ledger WHERE store_id = ? AND last_at >= ?
              WINDOW newest AS (PARTITION BY client_class, client_address ORDER BY last_at DESC, id DESC))
            SELECT client_class, client_address, max(last_at) AS last_fetch_at,
                   max(CASE WHEN ${OK} THEN version END) AS last_version,
                   max(CASE WHEN n = 1 THEN status END) AS last_status,
                   sum(CASE WHEN at >= ? THEN repeats + 1 ELSE 0 END) AS fetches_24h,
                   sum(CASE WHEN at < ? AND last_at >= ? THEN 1 ELSE 0 END) AS across_24h,
                   sum(repeats + 1) AS fetches,
                   sum(CASE WHEN newer < 3 AND ${OK} THEN 1 ELSE 0 END) AS last_three_ok
              FROM recent GROUP BY client_class, client_address ORDER BY max(last_at) DESC LIMIT ?`,
      params: [storeId, this.d.timeParam(since), ...Array(3).fill(this.d.timeParam(dayAgo)), limit],
    });
    const across = rows.some((r) => Number(r.across_24h) > 0) ? await this.repeatsAcross(storeId, dayAgo) : new Map<string, number>();
    return rows.map((r) => ({
      client_class: String(r.client_class),
      client_address: String(r.client_address),
      last_fetch_at: this.d.time(r.last_fetch_at),
      last_version: r.last_version === null ? null : Number(r.last_version),
      last_status: Number(r.last_status),
      fetches_24h: Number(r.fetches_24h) + (across.get(`${r.client_class}\n${r.client_address}`) ?? 0),
      failing: Number(r.fetches) >= 3 && Number(r.last_three_ok) === 0,
    }));
  }

  async deleteOlderThan(before: Date, limit: number): Promise<number> {
    // Small batches by id, so a large backlog never holds the write lock for long. A run goes
    // with its newest record (at most RUN_SPAN_MS after its oldest).
    const { changes } = await this.d.query({
      // Oldest ids first: runs arrive in time order (give or take a batch), so the scan stops early without an index on `last_at` alone.
      sql: 'DELETE FROM delivery_ledger WHERE id IN (SELECT id FROM delivery_ledger WHERE last_at < ? ORDER BY id LIMIT ?)',
      params: [this.d.timeParam(before), limit],
    });
    return changes;
  }

  /** Per consumer, the records at or after `dayAgo` in runs that began before it. */
  private async repeatsAcross(storeId: string, dayAgo: Date): Promise<Map<string, number>> {
    const { rows } = await this.d.query({
      sql: 'SELECT client_class, client_address, at, repeated FROM delivery_ledger WHERE store_id = ? AND last_at >= ? AND last_at <= ? AND at < ?',
      params: [storeId, this.d.timeParam(dayAgo), this.d.timeParam(new Date(dayAgo.getTime() + RUN_SPAN_MS)), this.d.timeParam(dayAgo)],
    });
    const counts = new Map<string, number>();
    for (const r of rows) {
      const consumer = `${r.client_class}\n${r.client_address}`;
      const triples = JSON.parse(String(r.repeated)) as number[];
      const firstAt = this.d.time(r.at).getTime();
      let count = 0;
      for (let i = 0; i < triples.length; i += 3) if (repeatedAt(firstAt, triples[i]) >= dayAgo.getTime()) count++;
      counts.set(consumer, (counts.get(consumer) ?? 0) + count);
    }
    return counts;
  }

  private records(r: Row): StoredDelivery[] {
    const first: DeliveryRecord = {
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
    return recordsOf(Number(r.id), first, r.repeated === null ? null : (JSON.parse(String(r.repeated)) as number[]));
  }
}
