import pg from 'pg';
import type { Publication, PublicationFeed } from '../warming-types.js';

/** The channel the publication trigger notifies (schema.ts, migration 2). */
export const PUBLICATION_CHANNEL = 'price_export_publication';

/** How the listening connection shows in pg_stat_activity (an operator counts one per instance). */
export const FEED_APPLICATION_NAME = 'price-export publication feed';

/** Waits between attempts to listen again after the connection is lost: 1 s, doubling up to 30 s. */
const RECONNECT_FIRST_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;
/**
 * After a reconnect, the log is read back this far before the newest row seen: a publication whose
 * log row got a lower seq but committed later (two stores publishing at once) is not missed.
 * Rows already told (or older than the feed's start) are not told again.
 */
const CATCH_UP_SLACK_MS = 60_000;
const MAX_TOLD = 10_000;

/**
 * Publications on PostgreSQL: one connection of this instance (outside the pool) LISTENs; the
 * trigger NOTIFYs in the publication's own transaction, so a notification means a commit. When
 * the connection is lost (a restart, a failover, a cut network) it listens again with backoff,
 * then reads the publication log for what committed meanwhile. Idle cost: none but the connection.
 */
export class PostgresPublicationFeed implements PublicationFeed {
  private client: pg.Client | null = null;
  private onPublished: ((publications: Publication[]) => void) | null = null;
  private onError: ((error: unknown) => void) | undefined;
  private closed = false;
  private retryMs = RECONNECT_FIRST_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  /** The newest log row seen. */
  private seen = { seq: 0, at: new Date(0) };
  /** Null until the first connection has read where the log stands: nothing up to it (published before the start) is news. */
  private baseline: number | null = null;
  /** Rows told already, so the catch-up's slack does not tell them twice (bounded: cleared when full). */
  private readonly told = new Set<number>();
  private connecting: Promise<void> | null = null;

  constructor(private readonly databaseUrl: string) {}

  start(onPublished: (publications: Publication[]) => void, onError?: (error: unknown) => void): void {
    if (this.onPublished || this.closed) return;
    this.onPublished = onPublished;
    this.onError = onError;
    this.connecting = this.connect();
  }

  /** Resolves once the first LISTEN is in place (or failed and a retry is scheduled); for tests and the start log. */
  async ready(): Promise<void> {
    await this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.connecting;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 3_000, keepAlive: true, application_name: FEED_APPLICATION_NAME });
    // One handler for both: a lost connection emits 'error' and/or 'end'.
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      if (error) this.onError?.(error);
      if (this.client === client) this.client = null;
      client.end().catch(() => undefined);
      this.scheduleRetry();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel !== PUBLICATION_CHANNEL || !message.payload) return;
      try {
        const { seq, store, version, at } = JSON.parse(message.payload) as { seq: number; store: string; version: number; at: string };
        this.deliver([{ seq: Number(seq), storeId: store, version: Number(version) }], new Date(at));
      } catch (error) {
        this.onError?.(error);
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${PUBLICATION_CHANNEL}`);
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.retryMs = RECONNECT_FIRST_MS;
      await this.catchUp(client);
    } catch (error) {
      onLost(error);
    }
  }

  /** Listening: what committed before LISTEN and after the last row seen is read from the log. */
  private async catchUp(client: pg.Client): Promise<void> {
    if (this.baseline === null) {
      const { rows } = await client.query<{ seq: string | null; at: Date | null }>('SELECT max(seq)::text AS seq, max(logged_at) AS at FROM publication_log');
      const seq = Number(rows[0].seq ?? 0);
      if (seq > this.seen.seq) this.seen = { seq, at: rows[0].at ?? new Date(0) };
      this.baseline = seq;
      return;
    }
    const since = new Date(this.seen.at.getTime() - CATCH_UP_SLACK_MS);
    const { rows } = await client.query<{ seq: string; store_id: string; version: number; logged_at: Date }>(
      'SELECT seq::text, store_id, version, logged_at FROM publication_log WHERE seq > $1 OR logged_at >= $2 ORDER BY seq',
      [this.seen.seq, since],
    );
    for (const row of rows) {
      if (Number(row.seq) > this.baseline) this.deliver([{ seq: Number(row.seq), storeId: row.store_id, version: row.version }], row.logged_at);
    }
  }

  private deliver(publications: Publication[], at: Date): void {
    const fresh = publications.filter((p) => !this.told.has(p.seq));
    if (fresh.length === 0) return;
    if (this.told.size >= MAX_TOLD) this.told.clear();
    for (const p of fresh) {
      this.told.add(p.seq);
      if (p.seq > this.seen.seq) this.seen = { seq: p.seq, at };
    }
    this.onPublished?.(fresh);
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connecting = this.connect();
    }, wait);
    this.retryTimer.unref();
  }
}
