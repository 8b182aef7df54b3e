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

  start(intervalMs = 1_000): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce().catch((error) => this.options.onError?.(error)), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private async drainAll(): Promise<number> {
    // One claim looks first; the other lanes start only when it found a webhook due. An idle
    // outbox, the usual second, then costs every instance one UPDATE on the shared database a
    // second, not one a lane (a fleet of 10 instances: 10 statements a second instead of 40).
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
    const retryAt = new Date(done.getTime() + retryDelayMs(message.attempts + 1));
    const giveUp = retryAt.getTime() - since.getTime() > RETRY_FOR_MS;
    await this.outbox.failed(message.id, hook.id, done, giveUp ? null : retryAt, result.error ?? 'failed');
    return false;
  }

  private leaseEnd(): Date {
    return new Date(this.now().getTime() + this.leaseMs);
  }
}
