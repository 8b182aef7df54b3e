import { PostgresListener } from './listener.js';

/** The channel the outbox trigger notifies (schema.ts, the outbox_announced migration). */
export const OUTBOX_CHANNEL = 'price_export_outbox';

/** How the outbox's listening connection shows in pg_stat_activity (one per instance whose sender runs). */
export const OUTBOX_APPLICATION_NAME = 'price-export outbox watch';

/**
 * Calls `listener` when any process commits a queued webhook event, and after each lost
 * connection is listening again (what was queued meanwhile would otherwise wait for the
 * sender's next look); not after the first LISTEN, when the sender looks at its start anyway.
 * Answers how to stop (every call the same promise).
 */
export function watchOutbox(databaseUrl: string, listener: () => void, onError?: (error: unknown) => void): { stop: () => Promise<void> } {
  let first = true;
  const connection = new PostgresListener(databaseUrl, {
    channel: OUTBOX_CHANNEL,
    applicationName: OUTBOX_APPLICATION_NAME,
    onNotification: () => listener(),
    onListening: () => {
      if (!first) listener();
      first = false;
    },
    onError,
  });
  connection.start();
  let stopped: Promise<void> | null = null;
  return { stop: () => (stopped ??= connection.close()) };
}
