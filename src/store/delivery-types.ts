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
 * before T + RUN_SPAN_MS. An hour: a stored run is continued by later batches (sql/ledger-writes.ts),
 * so a fetcher revalidating every 15 minutes makes a row of four answers, not four rows; a
 * page after a cursor reads the rows that end within the span after it (bench/RESULTS.md,
 * "2026-12-06, night": what a longer span costs a page).
 */
export const RUN_SPAN_MS = 3_600_000;

/** No run: the end of a store's chain of open runs. */
const NONE = -1;

/**
 * The ledger's queue and the batch it hands to the store: records gathered into *runs* as they
 * come, a run being consecutive records of one consumer (client class and address) that differ
 * only in their time, bytes and duration, stored as one row (sql/ledger-runs.ts).
 *
 * Held as columns, one entry per run: the run's first record, and `repeated`, the
 * [at_ms − first's at_ms, bytes_sent, duration_ms] triples of its later records (null while it
 * has none). An offset may be negative (a download that started earlier ended later); the
 * store orders a run before writing it. A poller's repeat costs three numbers pushed on its
 * run; where every record took a push per field, and the batch a second pass to find the runs,
 * the ledger cost a 304 ~5 % (bench/RESULTS.md, "2026-11-26, late morning"). A record waits up
 * to a second, and objects kept that long by the thousand were promoted and paid for in
 * old-generation collections ("The ledger's runs"), so a new run (every answer of a fleet of
 * seldom-polled stores) is pushes onto these columns, not objects.
 *
 * A consumer has one open run; it ends when the consumer gets an answer of another shape (so a
 * consumer's runs never interleave, and "its last three answers" stay in order), when it is
 * full, or when a record starts more than RUN_SPAN_MS / 2 from the run's first. Other stores'
 * answers in between do not end it: across a fleet, a batch interleaves thousands of stores.
 */
export class DeliveryRuns {
  readonly storeId: string[] = [];
  readonly keyId: string[] = [];
  readonly atMs: number[] = [];
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
  readonly repeated: (number[] | null)[] = [];
  /** Whether the run follows an earlier run of its consumer in this queue (only a consumer's first may continue a stored run). */
  readonly follows: boolean[] = [];
  /** Records held, in all runs. */
  length = 0;
  /**
   * Per store, its newest open run; each open run names the store's next older one in
   * `nextOpen` (one per consumer seen in the batch). A store has a handful of consumers in a
   * batch, so a walk along them is cheaper than a map per store, and numbers make no objects.
   */
  private readonly newestOpen = new Map<string, number>();
  private readonly nextOpen: number[] = [];

  static of(records: Iterable<DeliveryRecord>): DeliveryRuns {
    const runs = new DeliveryRuns();
    for (const record of records) runs.push({ ...record, at_ms: record.at.getTime() });
    return runs;
  }

  /** Runs held. */
  get runs(): number {
    return this.atMs.length;
  }

  push(r: QueuedDelivery): void {
    this.length++;
    let newest = this.newestOpen.get(r.store_id) ?? NONE;
    let newer = NONE;
    let run = newest;
    while (run !== NONE && (this.clientAddress[run] !== r.client_address || this.clientClass[run] !== r.client_class)) {
      newer = run;
      run = this.nextOpen[run];
    }
    if (run !== NONE) {
      if (this.joins(run, r)) {
        (this.repeated[run] ??= []).push(r.at_ms - this.atMs[run], r.bytes_sent, r.duration_ms);
        return;
      }
      // The consumer's run ends: out of the store's open runs.
      if (newer === NONE) newest = this.nextOpen[run];
      else this.nextOpen[newer] = this.nextOpen[run];
    }
    this.nextOpen.push(newest);
    this.newestOpen.set(r.store_id, this.start(r, run !== NONE));
  }

  /** Whether r may join the consumer's open run: everything but when, how much and how long is equal, and it has room. */
  private joins(run: number, r: QueuedDelivery): boolean {
    return this.keyId[run] === r.key_id && this.status[run] === r.status && this.finished[run] === r.finished && this.version[run] === r.version
      && this.format[run] === r.format && this.address[run] === r.address && this.profileId[run] === r.profile_id
      && this.onlyAvailable[run] === r.only_available && (this.repeated[run]?.length ?? 0) < 3 * (RUN_ID_SPACE - 1)
      && Math.abs(r.at_ms - this.atMs[run]) <= RUN_SPAN_MS / 2;
  }

  /** A new run of r; its index. */
  private start(r: QueuedDelivery, follows: boolean): number {
    this.storeId.push(r.store_id);
    this.keyId.push(r.key_id);
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
    this.repeated.push(null);
    this.follows.push(follows);
    return this.atMs.push(r.at_ms) - 1;
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
  /**
   * Calls `listener` after any process queues an event (SQLite: the events file; PostgreSQL: a
   * NOTIFY from the outbox's trigger) and answers how to stop, or answers null where nothing can
   * be watched: the sender then polls. `onError`: a lost watch (it is taken up again by itself).
   */
  watch?(listener: () => void, onError?: (error: unknown) => void): (() => void) | null;
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
