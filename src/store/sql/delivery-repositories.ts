import type { DeliveryRepositories } from '../delivery-types.js';
import type { DeliverySql } from './delivery-sql.js';
import { SqlLedgerRepository } from './ledger.js';
import { SqlConsumerAlertRepository, SqlOutboxRepository } from './outbox.js';
import { SqlWebhookRepository } from './webhooks.js';

/** The §12–§13 repositories over one dialect. */
export function deliveryRepositories(d: DeliverySql): DeliveryRepositories {
  return {
    ledger: new SqlLedgerRepository(d),
    webhooks: new SqlWebhookRepository(d),
    outbox: new SqlOutboxRepository(d),
    alerts: new SqlConsumerAlertRepository(d),
  };
}
