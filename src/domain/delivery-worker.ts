import type { Config } from '../config/config.js';
import type { Database } from '../store/types.js';
import { checkConsumerAlerts } from './consumer-alerts.js';
import type { Clock } from './ledger.js';
import { WebhookSender } from './webhook-sender.js';

/** How often consumers are checked for consumer.behind / consumer.failing. */
const ALERT_CHECK_MS = 60_000;

export interface DeliveryWorker {
  sender: WebhookSender;
  stop(): Promise<void>;
}

/**
 * The background side of CONTRACT §13 on one instance: the outbox sender (woken by queued
 * events: SQLite's events file, PostgreSQL's NOTIFY; webhook-sender.ts) and
 * the consumer alert check (every minute). Every instance runs one; the outbox's leases and
 * the alerts' flips make each event sent, and each episode fired, once.
 */
export function startDeliveryWorker(db: Database, config: Readonly<Config>, onError: (error: unknown, stage: string) => void, now: Clock = () => new Date()): DeliveryWorker {
  const sender = new WebhookSender(db.deliveries.outbox, { allowPrivate: config.webhookAllowPrivate, now, onError: (error) => onError(error, 'webhook sender') });
  sender.start();
  let checking: Promise<unknown> | null = null;
  const alerts = config.ledgerDays === 0 ? null : setInterval(() => {
    checking ??= checkConsumerAlerts(db, { ledgerDays: config.ledgerDays, staleAfterMin: config.staleAfterMin, now })
      .catch((error) => onError(error, 'consumer alerts'))
      .finally(() => { checking = null; });
  }, ALERT_CHECK_MS);
  alerts?.unref();
  return {
    sender,
    stop: async () => {
      if (alerts) clearInterval(alerts);
      await checking;
      await sender.stop();
    },
  };
}
