import type { NewWebhook, WebhookEvent, WebhookRecord, WebhookRepository } from '../delivery-types.js';
import type { DeliverySql, Row } from './delivery-sql.js';

const COLUMNS = 'id, store_id, url, events, created_at, failing_since, last_error';

/** Webhooks (CONTRACT §13). `events` is a comma-separated list; the secret is read only by the outbox's claim. */
export class SqlWebhookRepository implements WebhookRepository {
  constructor(private readonly d: DeliverySql) {}

  async create(webhook: NewWebhook): Promise<WebhookRecord> {
    const { rows } = await this.d.query({
      sql: `INSERT INTO webhooks (id, store_id, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
      params: [webhook.id, webhook.store_id, webhook.url, webhook.events.join(','), webhook.secret, this.d.timeParam(webhook.created_at)],
    });
    return this.webhook(rows[0]);
  }

  async list(storeId: string): Promise<WebhookRecord[]> {
    const { rows } = await this.d.query({ sql: `SELECT ${COLUMNS} FROM webhooks WHERE store_id = ? ORDER BY created_at, id`, params: [storeId] });
    return rows.map((r) => this.webhook(r));
  }

  async remove(id: string): Promise<boolean> {
    return this.d.transaction((function* () {
      yield { sql: 'DELETE FROM webhook_outbox WHERE webhook_id = ?', params: [id] };
      const removed = yield { sql: 'DELETE FROM webhooks WHERE id = ?', params: [id] };
      return removed.changes === 1;
    })());
  }

  async storesListening(events: readonly WebhookEvent[]): Promise<string[]> {
    const { rows } = await this.d.query({ sql: 'SELECT DISTINCT store_id, events FROM webhooks ORDER BY store_id', params: [] });
    const listening = rows.filter((r) => String(r.events).split(',').some((e) => events.includes(e as WebhookEvent)));
    return [...new Set(listening.map((r) => String(r.store_id)))];
  }

  private webhook(r: Row): WebhookRecord {
    return {
      id: String(r.id),
      store_id: String(r.store_id),
      url: String(r.url),
      events: String(r.events).split(',') as WebhookEvent[],
      created_at: this.d.time(r.created_at),
      failing_since: r.failing_since === null ? null : this.d.time(r.failing_since),
      last_error: (r.last_error as string | null) ?? null,
    };
  }
}
