import { AppError } from '../errors/app-error.js';
import type { DeliveryRepositories, LedgerCursor, PriceListRecord, QueuedDelivery, StoredDelivery } from '../store/types.js';
import { listConsumers, type Consumer, type ConsumerWindow } from './consumers.js';
import { retentionLine, type DeliveryLedger } from './ledger.js';

export type { QueuedDelivery };

/** Records per page of `GET /api/me/deliveries` at most. */
export const MAX_DELIVERIES_PAGE = 1000;

export interface DeliveryPage {
  deliveries: StoredDelivery[];
  /** Where the next (older) page starts; null on the last page. */
  next_before: string | null;
}

/** `next_before`: the last record's time and id, so records of one millisecond never fall between pages. */
const cursorOf = (record: StoredDelivery): string => `${record.at.toISOString()}~${record.id}`;

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i;

/** `before`: a next_before value, or a bare RFC 3339 time (records strictly before it). */
export function parseBefore(text: string | undefined): LedgerCursor | null {
  if (text === undefined || text === '') return null;
  const [time, id, ...rest] = text.split('~');
  const at = RFC3339.test(time) ? new Date(time) : new Date(NaN);
  if (rest.length > 0 || Number.isNaN(at.getTime()) || (id !== undefined && !/^\d{1,15}$/.test(id))) {
    throw new AppError('invalid_parameter', 'before must be a next_before value from an earlier page, or an RFC 3339 time such as 2026-11-22T07:00:00Z');
  }
  return { at, id: id === undefined ? 0 : Number(id) };
}

export function parseLimit(text: string | undefined): number {
  if (text === undefined || text === '') return 100;
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > MAX_DELIVERIES_PAGE) {
    throw new AppError('invalid_parameter', `limit must be an integer from 1 to ${MAX_DELIVERIES_PAGE}`);
  }
  return Number(text);
}

/**
 * The delivery ledger and consumers of CONTRACT §12, for the HTTP side: `record` queues (the
 * ledger writes in batches, off the request path), `page` and `consumers` read.
 */
export class DeliveryService {
  constructor(
    private readonly repositories: DeliveryRepositories,
    private readonly ledger: DeliveryLedger | null,
    readonly window: ConsumerWindow,
    /** The window's clock in milliseconds: an answer's time without a Date per answer. */
    readonly nowMs: () => number = () => window.now().getTime(),
  ) {}

  /** False with LEDGER_DAYS=0: nothing is recorded. */
  get recording(): boolean {
    return this.ledger !== null;
  }

  record(entry: QueuedDelivery): void {
    this.ledger?.record(entry);
  }

  /** Writes the queued records now (tests, shutdown; otherwise the ledger's timer does). */
  async flush(): Promise<void> {
    await this.ledger?.flush();
  }

  /** One page of the store's ledger, newest first; `limit` and `before` as the address gives them. */
  async page(storeId: string, limitText: string | undefined, beforeText: string | undefined): Promise<DeliveryPage> {
    const limit = parseLimit(limitText);
    const before = parseBefore(beforeText);
    const stored = await this.repositories.ledger.page(storeId, limit, before);
    // Retention deletes a run with its newest answer, up to an hour (RUN_SPAN_MS) after its oldest
    // passed LEDGER_DAYS: those are not listed. Newest first, so they are the page's tail.
    const line = this.window.ledgerDays > 0 ? retentionLine(this.window.now(), this.window.ledgerDays) : -Infinity;
    const deliveries = stored.filter((r) => r.at.getTime() >= line);
    const last = deliveries.at(-1);
    return { deliveries, next_before: deliveries.length === limit && last ? cursorOf(last) : null };
  }

  consumers(storeId: string, latest: PriceListRecord | null): Promise<Consumer[]> {
    return listConsumers(this.repositories, storeId, latest, this.window);
  }
}
