import type { ConsumerRow, DeliveryRepositories } from '../store/types.js';
import type { PriceListRecord } from '../store/types.js';
import { DAY_MS, retentionLine, type Clock } from './ledger.js';

/** Consumers listed at most (the most recent first): /api/me stays small. */
export const MAX_CONSUMERS = 100;

export interface ConsumerWindow {
  /** LEDGER_DAYS. */
  ledgerDays: number;
  /** STALE_AFTER_MIN. */
  staleAfterMin: number;
  now: Clock;
}

/** A consumer of CONTRACT §12 as /api/me shows it. */
export interface Consumer extends ConsumerRow {
  behind: boolean;
}

/**
 * True when the store's latest version is newer than what the consumer last received whole,
 * and was published more than STALE_AFTER_MIN ago (a poller gets that long to catch up).
 */
export function isBehind(consumer: Pick<ConsumerRow, 'last_version'>, latest: Pick<PriceListRecord, 'version' | 'published_at'> | null, window: ConsumerWindow): boolean {
  if (!latest) return false;
  if (consumer.last_version !== null && consumer.last_version >= latest.version) return false;
  return window.now().getTime() - latest.published_at.getTime() > window.staleAfterMin * 60_000;
}

/** The store's consumers seen in the last LEDGER_DAYS, most recent first. */
export async function listConsumers(deliveries: DeliveryRepositories, storeId: string, latest: PriceListRecord | null, window: ConsumerWindow): Promise<Consumer[]> {
  const now = window.now();
  const rows = await deliveries.ledger.consumers(storeId, new Date(retentionLine(now, window.ledgerDays)), new Date(now.getTime() - DAY_MS), MAX_CONSUMERS);
  return rows.map((row) => ({ ...row, behind: isBehind(row, latest, window) }));
}
