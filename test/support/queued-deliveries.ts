import { DeliveryRuns, type QueuedDelivery } from '../../src/store/delivery-types.js';

/** One answer as the request side queues it: a curl poller's 304 of shop's CSV, unless `over` says otherwise. */
export const queuedDelivery = (at: number, over: Partial<QueuedDelivery> = {}): QueuedDelivery => ({
  store_id: 'shop', key_id: 'key-1', at_ms: at, address: 'prices', format: 'csv', profile_id: null, only_available: false, version: 3,
  status: 304, bytes_sent: 180, finished: true, duration_ms: 1, client_class: 'curl', client_address: '192.0.2.1', ...over,
});

/** The ledger's queue after these answers, in order (its runs as the writer gets them). */
export function queuedRuns(records: readonly QueuedDelivery[]): DeliveryRuns {
  const runs = new DeliveryRuns();
  for (const r of records) runs.push(r);
  return runs;
}
