import { PostgresListener } from './listener.js';

/** The channel the outbox trigger notifies (schema.ts, the outbox_announced migration). */
export const OUTBOX_CHANNEL = 'price_export_outbox';

/** How the outbox's listening connection shows in pg_stat_activity (one per instance whose sender runs). */
export const OUTBOX_APPLICATION_NAME = 'price-export outbox watch';

/**
 * Calls `listener` when any process commits a queued webhook event, and each time the
 * connection is listening (again): what was queued before, while nobody listened, would
 * otherwise wait for the sender's next look. Close the answer to stop.
 */
export function watchOutbox(databaseUrl: string, listener: () => void, onError?: (error: unknown) => void): PostgresListener {
  const connection = new PostgresListener(databaseUrl, {
    channel: OUTBOX_CHANNEL,
    applicationName: OUTBOX_APPLICATION_NAME,
    onNotification: () => listener(),
    onListening: () => listener(),
    onError,
  });
  connection.start();
  return connection;
}
