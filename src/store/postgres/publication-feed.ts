import type pg from 'pg';
import { PostgresListener } from './listener.js';
import type { Publication, PublicationFeed } from '../warming-types.js';

/** The channel the publication trigger notifies (schema.ts, migration 2). */
export const PUBLICATION_CHANNEL = 'price_export_publication';

/** How the feed's listening connection shows in pg_stat_activity (one per instance; the outbox's is OUTBOX_APPLICATION_NAME). */
export const FEED_APPLICATION_NAME = 'price-export publication feed';

/**
 * After a reconnect, the log is read back this far before the newest row seen: a publication whose
 * log row got a lower seq but committed later (two stores publishing at once) is not missed.
 * Rows already told (or older than the feed's start) are not told again.
 */
const CATCH_UP_SLACK_MS = 60_000;
const MAX_TOLD = 10_000;

/**
 * Publications on PostgreSQL: the trigger NOTIFYs in the publication's own transaction, so a
 * notification means a commit; this instance's listening connection (listener.ts) hears it, and
 * after a lost connection reads the publication log for what committed meanwhile.
 */
export class PostgresPublicationFeed implements PublicationFeed {
  private listener: PostgresListener | null = null;
  private onPublished: ((publications: Publication[]) => void) | null = null;
  private closed = false;
  /** The newest log row seen. */
  private seen = { seq: 0, at: new Date(0) };
  /** Null until the first connection has read where the log stands: nothing up to it (published before the start) is news. */
  private baseline: number | null = null;
  /** Rows told already, so the catch-up's slack does not tell them twice (bounded: cleared when full). */
  private readonly told = new Set<number>();

  constructor(private readonly databaseUrl: string) {}

  start(onPublished: (publications: Publication[]) => void, onError?: (error: unknown) => void): void {
    if (this.onPublished || this.closed) return;
    this.onPublished = onPublished;
    this.listener = new PostgresListener(this.databaseUrl, {
      channel: PUBLICATION_CHANNEL,
      applicationName: FEED_APPLICATION_NAME,
      onNotification: (payload) => {
        const { seq, store, version, at } = JSON.parse(payload) as { seq: number; store: string; version: number; at: string };
        this.deliver([{ seq: Number(seq), storeId: store, version: Number(version) }], new Date(at));
      },
      onListening: (client) => this.catchUp(client),
      onError,
    });
    this.listener.start();
  }

  /** Resolves once the first LISTEN is in place (or failed and a retry is scheduled); for tests and the start log. */
  async ready(): Promise<void> {
    await this.listener?.ready();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.listener?.close();
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
}
