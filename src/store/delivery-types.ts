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
 * (one object fewer per answer; the ledger stores milliseconds anyway).
 */
export type QueuedDelivery = Omit<DeliveryRecord, 'at'> & { readonly at_ms: number };

/** Records in one run at most (their ids are row id × RUN_ID_SPACE + 0 … RUN_ID_SPACE − 1). */
export const RUN_ID_SPACE = 1024;
/**
 * A run's records start within this span of each other (a long download started earlier may
 * close among quick ones). Readers rely on it: a run holding records older than a time T ends
 * before T + RUN_SPAN_MS.
 */
export const RUN_SPAN_MS = 60_000;

/**
 * A run: consecutive records of one consumer (client class and address) that differ only in
 * their time, bytes and duration, stored as one row (sql/ledger-runs.ts). `first` is the first
 * record handed over; each later one is the triple [at_ms − first.at_ms, bytes_sent,
 * duration_ms] in `repeated`. An offset may be negative (a download that started earlier ended
 * later); the store orders a run before writing it.
 */
export interface QueuedRun {
  readonly first: QueuedDelivery;
  readonly repeated: number[];
}

/** Whether b may join the run a began: everything but when, how much and how long is equal. */
const sameShape = (a: QueuedDelivery, b: QueuedDelivery): boolean =>
  a.client_address === b.client_address && a.client_class === b.client_class && a.key_id === b.key_id && a.store_id === b.store_id
  && a.status === b.status && a.finished === b.finished && a.version === b.version && a.format === b.format
  && a.address === b.address && a.profile_id === b.profile_id && a.only_available === b.only_available;

/** A plain copy: what the request side hands over may hold its request (http/deliveries.ts). */
const recordOf = (r: QueuedDelivery): QueuedDelivery => ({
  store_id: r.store_id, key_id: r.key_id, at_ms: r.at_ms, address: r.address, format: r.format, profile_id: r.profile_id,
  only_available: r.only_available, version: r.version, status: r.status, bytes_sent: r.bytes_sent, finished: r.finished,
  duration_ms: r.duration_ms, client_class: r.client_class, client_address: r.client_address,
});

/**
 * The ledger's queue and the batch it hands to the store: records gathered into runs as they
 * come. A poller's answers are nearly all repeats of a run, so each costs three numbers pushed
 * onto its run, where columns of every field cost fourteen pushes an answer and a second pass
 * to find the runs (bench/RESULTS.md, "2026-11-26, late morning"). A record waits up to a second,
 * and 25,000 objects a second kept that long were promoted and paid for in old-generation
 * collections ("The ledger's runs"): here only a run's first record is an object kept.
 *
 * A consumer has one open run; it ends when the consumer gets an answer of another shape (so a
 * consumer's runs never interleave, and "its last three answers" stay in order), when it is
 * full, or when a record starts more than RUN_SPAN_MS / 2 from the run's first. Other stores'
 * answers in between do not end it: across a fleet, a batch interleaves thousands of stores.
 */
export class DeliveryRuns {
  readonly runs: QueuedRun[] = [];
  /** Records held, in all runs. */
  length = 0;
  /**
   * The open runs of each store's consumers: a store has a handful of consumers in a batch, so
   * a scan of its open runs is cheaper than a map per store (a fleet's batch names thousands of
   * stores) or a key joined from three strings for every answer.
   */
  private readonly open = new Map<string, QueuedRun[]>();

  static of(records: Iterable<DeliveryRecord>): DeliveryRuns {
    const runs = new DeliveryRuns();
    for (const record of records) runs.push({ ...record, at_ms: record.at.getTime() });
    return runs;
  }

  push(r: QueuedDelivery): void {
    this.length++;
    let ofStore = this.open.get(r.store_id);
    if (!ofStore) this.open.set(r.store_id, (ofStore = []));
    let index = 0;
    while (index < ofStore.length && (ofStore[index].first.client_address !== r.client_address || ofStore[index].first.client_class !== r.client_class)) index++;
    const run = index < ofStore.length ? ofStore[index] : null;
    if (run && run.repeated.length < 3 * (RUN_ID_SPACE - 1) && sameShape(run.first, r) && Math.abs(r.at_ms - run.first.at_ms) <= RUN_SPAN_MS / 2) {
      run.repeated.push(r.at_ms - run.first.at_ms, r.bytes_sent, r.duration_ms);
      return;
    }
    const next: QueuedRun = { first: recordOf(r), repeated: [] };
    ofStore[index] = next;
    this.runs.push(next);
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
  insert(records: DeliveryRuns): Promise<void>;
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
