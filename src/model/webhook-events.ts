import { randomBytes } from 'node:crypto';

/**
 * The bodies of CONTRACT §13's events, per Standard Webhooks: `{"type", "timestamp", "data"}`,
 * fixed when the event happens (every retry sends the same bytes under the same webhook-id).
 * `data` names the store and the version, never a key.
 */

export const WEBHOOK_EVENTS = [
  'price_list.published', 'publication.held', 'publication.quarantined', 'consumer.behind', 'consumer.failing',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** An event bound for the outbox: one row per webhook of the store that listens for its type. */
export interface OutboxEvent {
  store_id: string;
  type: WebhookEvent;
  /** Standard Webhooks' `webhook-id`: one per event, the same on every retry. */
  event_id: string;
  /** The exact body that is signed and sent, fixed when the event happens. */
  body: string;
  at: Date;
}


/** The §10 diff counts a publication event carries. */
export interface DiffCounts {
  added: number;
  removed: number;
  price_up: number;
  price_down: number;
  unchanged: number;
}

/** Standard Webhooks' message id: `msg_` + 24 random base64url characters (no `.`, which the signed content uses as its delimiter). */
export const newEventId = (): string => `msg_${randomBytes(18).toString('base64url')}`;

function event(type: WebhookEvent, storeId: string, at: Date, data: Record<string, unknown>): OutboxEvent {
  return {
    store_id: storeId,
    type,
    event_id: newEventId(),
    at,
    body: JSON.stringify({ type, timestamp: at.toISOString(), data: { store_id: storeId, ...data } }),
  };
}

/** price_list.published, publication.held, publication.quarantined: the version and its diff counts (null before #13's guard supplies them). */
export function publicationEvent(
  type: 'price_list.published' | 'publication.held' | 'publication.quarantined', storeId: string, version: number, at: Date, diff: DiffCounts | null,
): OutboxEvent {
  const counts = diff && { added: diff.added, removed: diff.removed, price_up: diff.price_up, price_down: diff.price_down, unchanged: diff.unchanged };
  return event(type, storeId, at, { version, diff: counts });
}

/** What consumer events say about the consumer (the same fields /api/me's consumers show). */
export interface ConsumerFacts {
  client_class: string;
  client_address: string;
  last_version: number | null;
  last_fetch_at: Date;
  last_status: number;
}

/** consumer.behind / consumer.failing: the store's latest version and the consumer. */
export function consumerEvent(type: 'consumer.behind' | 'consumer.failing', storeId: string, latestVersion: number | null, consumer: ConsumerFacts, at: Date): OutboxEvent {
  return event(type, storeId, at, {
    version: latestVersion,
    consumer: {
      client_class: consumer.client_class,
      client_address: consumer.client_address,
      last_version: consumer.last_version,
      last_fetch_at: consumer.last_fetch_at.toISOString(),
      last_status: consumer.last_status,
    },
  });
}
