/**
 * The storage seam of CONTRACT §12–§13: the delivery ledger, consumers' alert episodes,
 * webhooks and their outbox. Written once in `sql/` (ledger.ts, webhooks.ts, outbox.ts) over
 * both dialects; the contract tests are test/deliveries/*.test.ts.
 */
import type { OutboxEvent, WebhookEvent } from '../model/webhook-events.js';

export type { OutboxEvent, WebhookEvent };

/** One answered export request by a valid key. Never the key itself: its id only. */
export interface DeliveryRecord {
  store_id: string;
  key_id: string;
  at: Date;
  /** `prices` (addresses 2 and 4), `summary` (address 3) or `changes` (CONTRACT §11). */
  address: string;
  /** Null when the request failed before its parameters were read. */
  format: string | null;
  profile_id: number | null;
  only_available: boolean | null;
  /** The version served (or compared, for a 304); null when none was. */
  version: number | null;
  status: number;
  /** Bytes handed to the connection for this response, headers included. */
  bytes_sent: number;
  /** True when the whole response was handed to the connection before it closed. */
  finished: boolean;
  duration_ms: number;
  client_class: string;
  client_address: string;
}

/**
 * A record as the request side hands it to the ledger: its time in milliseconds, not a Date
 * (one object fewer per answer; the columns keep milliseconds anyway).
 */
export type QueuedDelivery = Omit<DeliveryRecord, 'at'> & { readonly at_ms: number };

/**
 * Records as columns: how the ledger's queue holds them and hands a batch to the store. A record
 * waits up to a second; as objects, 25,000 a second of them outlived the young generation and
 * were promoted, so the old generation's collections paid for every answer (bench/RESULTS.md,
 * "The ledger's runs"). Columns of numbers and of strings the request already held keep nothing
 * new alive, and the store builds its rows from them without rebuilding a record per answer.
 */
export class DeliveryColumns {
  readonly storeId: string[] = [];
  readonly keyId: string[] = [];
  readonly at: number[] = [];
  readonly address: string[] = [];
  readonly format: (string | null)[] = [];
  readonly profileId: (number | null)[] = [];
  readonly onlyAvailable: (boolean | null)[] = [];
  readonly version: (number | null)[] = [];
  readonly status: number[] = [];
  readonly bytesSent: number[] = [];
  readonly finished: boolean[] = [];
  readonly durationMs: number[] = [];
  readonly clientClass: string[] = [];
  readonly clientAddress: string[] = [];

  static of(records: Iterable<DeliveryRecord>): DeliveryColumns {
    const columns = new DeliveryColumns();
    for (const record of records) columns.push({ ...record, at_ms: record.at.getTime() });
    return columns;
  }

  get length(): number {
    return this.at.length;
  }

  push(r: QueuedDelivery): void {
    this.storeId.push(r.store_id);
    this.keyId.push(r.key_id);
    this.at.push(r.at_ms);
    this.address.push(r.address);
    this.format.push(r.format);
    this.profileId.push(r.profile_id);
    this.onlyAvailable.push(r.only_available);
    this.version.push(r.version);
    this.status.push(r.status);
    this.bytesSent.push(r.bytes_sent);
    this.finished.push(r.finished);
    this.durationMs.push(r.duration_ms);
    this.clientClass.push(r.client_class);
    this.clientAddress.push(r.client_address);
  }
}

export interface StoredDelivery extends DeliveryRecord {
  id: number;
}

/** Where a page of the ledger starts: strictly older than this record (newest first). */
export interface LedgerCursor {
  at: Date;
  id: number;
}

/** One (client class, client address) of a store, summed over the window asked for. */
export interface ConsumerRow {
  client_class: string;
  client_address: string;
  last_fetch_at: Date;
  /** The newest version it received whole (200/206/304, finished); null when none. */
  last_version: number | null;
  last_status: number;
  fetches_24h: number;
  /** Its last three deliveries all failed or were cut (consumer.failing). */
  failing: boolean;
}

export interface LedgerRepository {
  /** Appends a batch of records (stored as runs, sql/ledger-runs.ts). */
  insert(records: DeliveryColumns): Promise<void>;
  /** The store's records newest first, `limit` of them, older than `before` when given. */
  page(storeId: string, limit: number, before: LedgerCursor | null): Promise<StoredDelivery[]>;
  /** One row per consumer seen since `since`; `dayAgo` bounds fetches_24h. At most `limit`, most recent first. */
  consumers(storeId: string, since: Date, dayAgo: Date, limit: number): Promise<ConsumerRow[]>;
  /** Deletes at most `limit` records older than `before`; returns how many went. */
  deleteOlderThan(before: Date, limit: number): Promise<number>;
}

export interface WebhookRecord {
  id: string;
  store_id: string;
  url: string;
  events: WebhookEvent[];
  created_at: Date;
  /** Set when an event could not be delivered for 24 hours; cleared by the next delivery. */
  failing_since: Date | null;
  last_error: string | null;
}

export interface NewWebhook {
  id: string;
  store_id: string;
  url: string;
  events: WebhookEvent[];
  /** `whsec_…`, kept so the service can sign (README, "Webhook secrets"). */
  secret: string;
  created_at: Date;
}

export interface WebhookRepository {
  create(webhook: NewWebhook): Promise<WebhookRecord>;
  list(storeId: string): Promise<WebhookRecord[]>;
  /** Removes the webhook and its undelivered events; false when there was none. */
  remove(id: string): Promise<boolean>;
  /** Store ids with a webhook for any of these events. */
  storesListening(events: readonly WebhookEvent[]): Promise<string[]>;
}

/** A webhook whose queue this sender holds until `lease_until`. */
export interface ClaimedWebhook {
  id: string;
  url: string;
  secret: string;
}

export interface OutboxMessage {
  id: number;
  event_id: string;
  type: string;
  body: string;
  attempts: number;
  first_failure_at: Date | null;
}

export interface OutboxRepository {
  /** Inserts the event for every listening webhook, in its own transaction (publication.ts's commit uses the steps instead). */
  enqueue(event: OutboxEvent): Promise<number>;
  /**
   * Takes the lease of one webhook whose oldest pending message is due, if no live lease
   * holds it (PostgreSQL: FOR UPDATE SKIP LOCKED, so instances never wait on each other).
   */
  claim(owner: string, now: Date, leaseUntil: Date): Promise<ClaimedWebhook | null>;
  /** The webhook's oldest pending messages, in order, if they are due. */
  head(webhookId: string, now: Date, limit: number): Promise<OutboxMessage[]>;
  /** Extends this owner's lease; false when it is no longer this owner's. */
  renew(webhookId: string, owner: string, leaseUntil: Date): Promise<boolean>;
  delivered(messageId: number, webhookId: string, at: Date): Promise<void>;
  /** A failed attempt: tried again at `retryAt`, or given up (`retryAt` null) and the webhook marked failing. */
  failed(messageId: number, webhookId: string, at: Date, retryAt: Date | null, error: string): Promise<void>;
  release(webhookId: string, owner: string): Promise<void>;
  /** Every message of a webhook in order (tests and `webhook list` counts). */
  messages(webhookId: string): Promise<(OutboxMessage & { state: string })[]>;
}

/** consumer.behind / consumer.failing fire once per episode: these flip the episode's flag. */
export interface ConsumerAlert {
  client_class: string;
  client_address: string;
  /** The latest version when its behind episode began; null when not behind. */
  behind_version: number | null;
  failing_since: Date | null;
}

export interface ConsumerAlertRepository {
  /** The store's consumers with an open or past episode. */
  list(storeId: string): Promise<ConsumerAlert[]>;
  /**
   * Starts (a behind version / `on`) or ends (null / off) an episode for one consumer, and when it starts inserts the event
   * in the same transaction. Returns true when this call started it (so exactly one instance fires).
   */
  setBehind(storeId: string, clientClass: string, clientAddress: string, behindVersion: number | null, event: OutboxEvent | null): Promise<boolean>;
  setFailing(storeId: string, clientClass: string, clientAddress: string, on: boolean, event: OutboxEvent | null, at: Date): Promise<boolean>;
}

/** Everything of §12–§13 the database keeps. */
export interface DeliveryRepositories {
  readonly ledger: LedgerRepository;
  readonly webhooks: WebhookRepository;
  readonly outbox: OutboxRepository;
  readonly alerts: ConsumerAlertRepository;
}
