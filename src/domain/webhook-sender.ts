import { randomUUID } from 'node:crypto';
import type { ClaimedWebhook, OutboxMessage, OutboxRepository } from '../store/types.js';
import type { Clock } from './ledger.js';
import { postWebhook, WEBHOOK_TIMEOUT_MS, type PostResult } from './webhook-post.js';
import { signatureHeaders } from './webhook-signature.js';

/** CONTRACT §13: a message is retried for 24 hours, then given up and its webhook marked failing. */
export const RETRY_FOR_MS = 24 * 3_600_000;
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 3_600_000;

/** The wait before the next attempt after `attempts` failures: 5 s doubling to at most 1 h, ±10 % jitter (spec "Deliverability"). */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.9 + 0.2 * random()));
}

/** How often a sender looks for due messages where nothing tells it of new ones (SQLite's events file beyond inotify's limit). */
export const POLL_MS = 1_000;
/**
 * …and where every queued event is announced (SQLite's events file, PostgreSQL's NOTIFY): only
 * for what no announcement tells — a lease left by a killed instance, a retry another instance set.
 */
export const WATCHED_POLL_MS = 5_000;

export interface SenderTiming {
  pollMs: number;
  watchedPollMs: number;
}

export type Post = (url: string, headers: Record<string, string>, body: string) => Promise<PostResult>;

export interface SenderOptions {
  allowPrivate: boolean;
  now?: Clock;
  /** Who holds a lease (this process); a random id by default. */
  owner?: string;
  /** How long a claimed webhook stays this sender's without a renewal; above the 10 s timeout. */
  leaseMs?: number;
  /** Webhooks served at once by this instance. */
  concurrency?: number;
  post?: Post;
  /** The wait before a failed message's next attempt (retryDelayMs); tests shorten it. */
  retryDelayMs?: (attempts: number) => number;
  onError?: (error: unknown) => void;
}

/**
 * Sends the outbox (CONTRACT §13). Runs on every instance: a webhook's queue is leased by one
 * sender at a time (sql/outbox.ts's claim), which sends its due messages in order, one at a
 * time, stopping at the first failure so nothing overtakes it. A sender killed mid-delivery
 * leaves its lease to run out; another (or the restarted one) then sends the message again:
 * at least once, and in order.
 */
export class WebhookSender {
  private readonly now: Clock;
  private readonly owner: string;
  private readonly leaseMs: number;
  private readonly post: Post;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private started = false;
  private unwatch: (() => void) | null = null;
  private pollMs = POLL_MS;
  /** Woken while a run was under way: one more run after it (the event may have come too late for its claims). */
  private again = false;
  /** The earliest retry this sender set (epoch ms), so it is sent on time between polls. */
  private nextRetryAt: number | null = null;

  constructor(private readonly outbox: OutboxRepository, private readonly options: SenderOptions) {
    this.now = options.now ?? (() => new Date());
    this.owner = options.owner ?? randomUUID();
    this.leaseMs = options.leaseMs ?? 3 * WEBHOOK_TIMEOUT_MS;
    this.post = options.post ?? ((url, headers, body) => postWebhook(url, headers, body, { allowPrivate: options.allowPrivate }));
  }

  /** Sends everything due now; returns the attempts made. Tests call it instead of waiting for the timer. */
  runOnce(): Promise<number> {
    this.running ??= this.drainAll().finally(() => { this.running = null; });
    return this.running;
  }

  /**
   * Sends on its own from now on: at once when the outbox tells of a queued event (an idle
   * instance then wakes for nothing), at a retry's time, and on a poll for the rest.
   */
  start(timing: SenderTiming = { pollMs: POLL_MS, watchedPollMs: WATCHED_POLL_MS }): void {
    if (this.started) return;
    this.started = true;
    this.unwatch = this.outbox.watch?.(() => this.wake(), this.options.onError) ?? null;
    this.pollMs = this.unwatch ? timing.watchedPollMs : timing.pollMs;
    // What was queued while no instance ran goes out now, not at the first poll.
    this.tick();
  }

  /** Whether queued events wake this sender (else it looks every second); for tests. */
  get watching(): boolean {
    return this.unwatch !== null;
  }

  /** Sends what is due now; during a run, one more run follows it. */
  wake(): void {
    if (!this.started) return;
    if (this.running) this.again = true;
    else this.tick();
  }

  async stop(): Promise<void> {
    this.started = false;
    this.unwatch?.();
    this.unwatch = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private tick(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // A retry whose time has come is this run's to send (or another instance's): forgotten, so
    // a webhook leased elsewhere cannot make this sender spin.
    if (this.nextRetryAt !== null && this.nextRetryAt <= this.now().getTime()) this.nextRetryAt = null;
    void this.runOnce()
      .catch((error) => this.options.onError?.(error))
      .finally(() => {
        if (!this.started) return;
        if (!this.again) return this.schedule();
        this.again = false;
        this.tick();
      });
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    const untilRetry = this.nextRetryAt === null ? Infinity : Math.max(0, this.nextRetryAt - this.now().getTime());
    this.timer = setTimeout(() => this.tick(), Math.min(this.pollMs, untilRetry));
    this.timer.unref();
  }

  private async drainAll(): Promise<number> {
    // One claim looks first; the other lanes start only when it found a webhook due. An idle
    // outbox, the usual look, then costs every instance one UPDATE on the shared database, not
    // one a lane (a fleet of 10 instances on PostgreSQL: 10 statements a second instead of 40).
    const first = await this.claim();
    if (!first) return 0;
    const others = Array.from({ length: (this.options.concurrency ?? 4) - 1 }, async () => this.drainLane(await this.claim()));
    return (await Promise.all([this.drainLane(first), ...others])).reduce((a, b) => a + b, 0);
  }

  private claim(): Promise<ClaimedWebhook | null> {
    return this.outbox.claim(this.owner, this.now(), this.leaseEnd());
  }

  /** Sends `first`'s due messages, then claims webhooks one after another until none is due. */
  private async drainLane(first: ClaimedWebhook | null): Promise<number> {
    let attempts = 0;
    for (let hook = first; hook; hook = await this.claim()) {
      try {
        for (const message of await this.outbox.head(hook.id, this.now(), 20)) {
          if (!(await this.outbox.renew(hook.id, this.owner, this.leaseEnd()))) break;
          attempts++;
          if (!(await this.attempt(hook, message))) break;
        }
      } finally {
        await this.outbox.release(hook.id, this.owner);
      }
    }
    return attempts;
  }

  private async attempt(hook: { id: string; url: string; secret: string }, message: OutboxMessage): Promise<boolean> {
    const at = this.now();
    const result = await this.post(hook.url, signatureHeaders(hook.secret, message.event_id, at, message.body), message.body);
    const done = this.now();
    if (result.ok) {
      await this.outbox.delivered(message.id, hook.id, done);
      return true;
    }
    const since = message.first_failure_at ?? at;
    const retryAt = new Date(done.getTime() + (this.options.retryDelayMs ?? retryDelayMs)(message.attempts + 1));
    const giveUp = retryAt.getTime() - since.getTime() > RETRY_FOR_MS;
    if (!giveUp) this.nextRetryAt = Math.min(this.nextRetryAt ?? Infinity, retryAt.getTime());
    await this.outbox.failed(message.id, hook.id, done, giveUp ? null : retryAt, result.error ?? 'failed');
    return false;
  }

  private leaseEnd(): Date {
    return new Date(this.now().getTime() + this.leaseMs);
  }
}
