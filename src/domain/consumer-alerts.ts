import { consumerEvent } from '../model/webhook-events.js';
import type { Database } from '../store/types.js';
import { listConsumers, type ConsumerWindow } from './consumers.js';

/**
 * consumer.behind and consumer.failing (CONTRACT §13), once per episode: for each store with a
 * webhook for them, every consumer's state is compared with its alert flags; a flag that flips
 * on inserts the event in the same transaction (sql/outbox.ts), and flips back when the
 * consumer catches up or succeeds again. Runs on every instance; the flip decides who fires.
 */
export async function checkConsumerAlerts(db: Database, window: ConsumerWindow): Promise<number> {
  const { webhooks, alerts } = db.deliveries;
  let fired = 0;
  for (const storeId of await webhooks.storesListening(['consumer.behind', 'consumer.failing'])) {
    const latest = await db.priceLists.latest(storeId);
    const known = new Map((await alerts.list(storeId)).map((a) => [`${a.client_class}\n${a.client_address}`, a]));
    for (const consumer of await listConsumers(db.deliveries, storeId, latest, window)) {
      const was = known.get(`${consumer.client_class}\n${consumer.client_address}`);
      const at = window.now();
      if (consumer.behind !== (was?.behind_version != null)) {
        const event = consumer.behind ? consumerEvent('consumer.behind', storeId, latest?.version ?? null, consumer, at) : null;
        if (await alerts.setBehind(storeId, consumer.client_class, consumer.client_address, consumer.behind ? latest!.version : null, event) && event) fired++;
      }
      if (consumer.failing !== (was?.failing_since != null)) {
        const event = consumer.failing ? consumerEvent('consumer.failing', storeId, latest?.version ?? null, consumer, at) : null;
        if (await alerts.setFailing(storeId, consumer.client_class, consumer.client_address, consumer.failing, event, at) && event) fired++;
      }
    }
  }
  return fired;
}
