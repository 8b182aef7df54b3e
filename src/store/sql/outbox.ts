import type {
  ClaimedWebhook, ConsumerAlert, ConsumerAlertRepository, OutboxEvent, OutboxMessage, OutboxRepository,
} from '../delivery-types.js';
import type { DeliverySql, QueryResult, Row, Steps } from './delivery-sql.js';

/**
 * The outbox insert as transaction steps: one row per webhook of the store that listens for
 * the event's type. A publication's commit runs it inside its own transaction
 * (`yield* enqueueSteps(…)`), so the event exists exactly when the publication does.
 */
export function* enqueueSteps(d: Pick<DeliverySql, 'timeParam'>, event: OutboxEvent): Steps<number> {
  const hooks = yield { sql: 'SELECT id, events FROM webhooks WHERE store_id = ?', params: [event.store_id] };
  let inserted = 0;
  for (const hook of hooks.rows) {
    if (!String(hook.events).split(',').includes(event.type)) continue;
    yield {
      sql: `INSERT INTO webhook_outbox (webhook_id, event_id, type, body, created_at, state, next_attempt_at)
            VALUES (?, ?, ?, ?, ?, 'pending', ?)`,
      params: [hook.id, event.event_id, event.type, event.body, d.timeParam(event.at), d.timeParam(event.at)],
    };
    inserted++;
  }
  return inserted;
}

/** The oldest pending message of the webhook `w`: only it may be sent (in order per webhook). */
const HEAD_DUE = `(SELECT o.next_attempt_at FROM webhook_outbox o WHERE o.webhook_id = w.id AND o.state = 'pending' ORDER BY o.id LIMIT 1) <= ?`;

/** Whether any pending message is due (`?`: now): the claim's first look, a read (see claim). */
export const ANY_DUE_SQL = `SELECT 1 AS due FROM webhook_outbox WHERE state = 'pending' AND next_attempt_at <= ? LIMIT 1`;

/** The durable outbox (CONTRACT §13), one SQL text for both dialects but the claim's lock clause. */
export class SqlOutboxRepository implements OutboxRepository {
  constructor(private readonly d: DeliverySql) {}

  async enqueue(event: OutboxEvent): Promise<number> {
    const queued = await this.d.transaction(enqueueSteps(this.d, event));
    if (queued > 0) this.d.announce?.();
    return queued;
  }

  watch(listener: () => void, onError?: (error: unknown) => void): (() => void) | null {
    return this.d.watchAnnouncements?.(listener, onError) ?? null;
  }

  async claim(owner: string, now: Date, leaseUntil: Date): Promise<ClaimedWebhook | null> {
    const at = this.d.timeParam(now);
    // A read first. The claim's UPDATE takes the database's write lock even when it matches
    // nothing; on SQLite the main connection then waits for any other process's write (a
    // publication's batches) to end, the event loop with it, and every publication wakes the
    // sender there (sqlite/events-file.ts): in a publish storm these waits were a fifth of the
    // server's main thread (bench/RESULTS.md, "2026-12-07, day"). Reads never wait for a writer.
    // No pending message due means no webhook's oldest pending one is: the UPDATE would find none.
    const { rows: due } = await this.d.query({ sql: ANY_DUE_SQL, params: [at], prepared: 'outbox_due' });
    if (due.length === 0) return null;
    // PostgreSQL: rows another instance is claiming are skipped, not waited for. SQLite has one
    // writer at a time, so the UPDATE alone decides; the lease keeps other processes off the
    // webhook while its message is on the wire.
    const lock = this.d.name === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
    const { rows } = await this.d.query({
      sql: `UPDATE webhooks SET lease_owner = ?, lease_until = ?
             WHERE id = (SELECT w.id FROM webhooks w
                          WHERE (w.lease_until IS NULL OR w.lease_until < ?) AND ${HEAD_DUE}
                          ORDER BY w.id LIMIT 1 ${lock})
               AND (lease_until IS NULL OR lease_until < ?)
            RETURNING id, url, secret`,
      params: [owner, this.d.timeParam(leaseUntil), at, at, at],
    });
    return rows[0] ? { id: String(rows[0].id), url: String(rows[0].url), secret: String(rows[0].secret) } : null;
  }

  async head(webhookId: string, now: Date, limit: number): Promise<OutboxMessage[]> {
    const { rows } = await this.d.query({
      sql: `SELECT * FROM webhook_outbox WHERE webhook_id = ? AND state = 'pending' ORDER BY id LIMIT ?`,
      params: [webhookId, limit],
    });
    // A message not yet due stops the batch: the ones after it wait their turn.
    const due: OutboxMessage[] = [];
    for (const row of rows) {
      if (this.d.time(row.next_attempt_at) > now) break;
      due.push(this.message(row));
    }
    return due;
  }

  async renew(webhookId: string, owner: string, leaseUntil: Date): Promise<boolean> {
    const { changes } = await this.d.query({
      sql: 'UPDATE webhooks SET lease_until = ? WHERE id = ? AND lease_owner = ?',
      params: [this.d.timeParam(leaseUntil), webhookId, owner],
    });
    return changes === 1;
  }

  async delivered(messageId: number, webhookId: string, at: Date): Promise<void> {
    const d = this.d;
    await d.transaction((function* () {
      yield { sql: "UPDATE webhook_outbox SET state = 'delivered', delivered_at = ?, attempts = attempts + 1 WHERE id = ?", params: [d.timeParam(at), messageId] };
      yield { sql: 'UPDATE webhooks SET failing_since = NULL, last_error = NULL WHERE id = ?', params: [webhookId] };
    })());
  }

  async failed(messageId: number, webhookId: string, at: Date, retryAt: Date | null, error: string): Promise<void> {
    const d = this.d;
    await d.transaction((function* () {
      yield {
        sql: `UPDATE webhook_outbox SET attempts = attempts + 1, first_failure_at = COALESCE(first_failure_at, ?), last_error = ?,
                     state = ?, next_attempt_at = ? WHERE id = ?`,
        params: [d.timeParam(at), error, retryAt ? 'pending' : 'dead', d.timeParam(retryAt ?? at), messageId],
      };
      yield retryAt
        ? { sql: 'UPDATE webhooks SET last_error = ? WHERE id = ?', params: [error, webhookId] }
        : { sql: 'UPDATE webhooks SET last_error = ?, failing_since = COALESCE(failing_since, ?) WHERE id = ?', params: [error, d.timeParam(at), webhookId] };
    })());
  }

  async release(webhookId: string, owner: string): Promise<void> {
    await this.d.query({ sql: 'UPDATE webhooks SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?', params: [webhookId, owner] });
  }

  async messages(webhookId: string): Promise<(OutboxMessage & { state: string })[]> {
    const { rows } = await this.d.query({ sql: 'SELECT * FROM webhook_outbox WHERE webhook_id = ? ORDER BY id', params: [webhookId] });
    return rows.map((r) => ({ ...this.message(r), state: String(r.state) }));
  }

  private message(r: Row): OutboxMessage {
    return {
      id: Number(r.id),
      event_id: String(r.event_id),
      type: String(r.type),
      body: String(r.body),
      attempts: Number(r.attempts),
      first_failure_at: r.first_failure_at === null ? null : this.d.time(r.first_failure_at),
    };
  }
}

/**
 * Consumer alert episodes: a conditional UPDATE flips the flag, and only the call that flipped
 * it inserts the event, in the same transaction. Two instances checking at once fire once.
 */
export class SqlConsumerAlertRepository implements ConsumerAlertRepository {
  constructor(private readonly d: DeliverySql) {}

  async list(storeId: string): Promise<ConsumerAlert[]> {
    const { rows } = await this.d.query({ sql: 'SELECT * FROM consumer_alerts WHERE store_id = ?', params: [storeId] });
    return rows.map((r) => ({
      client_class: String(r.client_class),
      client_address: String(r.client_address),
      behind_version: r.behind_version === null ? null : Number(r.behind_version),
      failing_since: r.failing_since === null ? null : this.d.time(r.failing_since),
    }));
  }

  setBehind(storeId: string, clientClass: string, clientAddress: string, behindVersion: number | null, event: OutboxEvent | null): Promise<boolean> {
    return this.flip(storeId, clientClass, clientAddress, 'behind_version', behindVersion, event);
  }

  setFailing(storeId: string, clientClass: string, clientAddress: string, on: boolean, event: OutboxEvent | null, at: Date): Promise<boolean> {
    return this.flip(storeId, clientClass, clientAddress, 'failing_since', on ? this.d.timeParam(at) : null, event);
  }

  private async flip(storeId: string, clientClass: string, clientAddress: string, column: 'behind_version' | 'failing_since', value: unknown, event: OutboxEvent | null): Promise<boolean> {
    const d = this.d;
    const key = [storeId, clientClass, clientAddress];
    const done = await d.transaction((function* () {
      yield {
        sql: 'INSERT INTO consumer_alerts (store_id, client_class, client_address) VALUES (?, ?, ?) ON CONFLICT (store_id, client_class, client_address) DO NOTHING',
        params: key,
      };
      const flipped: QueryResult = value === null
        ? yield { sql: `UPDATE consumer_alerts SET ${column} = NULL WHERE store_id = ? AND client_class = ? AND client_address = ? AND ${column} IS NOT NULL`, params: key }
        : yield { sql: `UPDATE consumer_alerts SET ${column} = ? WHERE store_id = ? AND client_class = ? AND client_address = ? AND ${column} IS NULL`, params: [value, ...key] };
      if (flipped.changes !== 1) return { flipped: false, queued: 0 };
      return { flipped: true, queued: value !== null && event ? yield* enqueueSteps(d, event) : 0 };
    })());
    if (done.queued > 0) d.announce?.();
    return done.flipped;
  }
}
