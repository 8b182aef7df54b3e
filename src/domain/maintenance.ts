import type { Database } from '../store/types.js';

/** How often a serving instance sweeps: drafts of killed publications, versions past their grace. */
export const MAINTENANCE_EVERY_MS = 5 * 60_000;

export interface Maintenance {
  /** One sweep now (the timer's work; tests call it directly). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The database's housekeeping on a timer, in every serving instance (red-team #20.19: the draft
 * of a killed publication stayed until the store published again, an hour later or never; a
 * store that stopped publishing kept its superseded rows). The sweeps are idempotent, so
 * instances running them at once only repeat each other's work; the rows go in small batches
 * off the event loop (store/sql/purge.ts). A failure is reported and the next run tries again.
 */
export function startMaintenance(db: Database, onError: (error: unknown) => void, everyMs = MAINTENANCE_EVERY_MS): Maintenance {
  let running: Promise<void> | null = null;
  const runOnce = () =>
    (running ??= (async () => {
      try {
        await db.priceLists.sweepStaleDrafts();
        await db.versions.sweepDue();
      } catch (error) {
        onError(error);
      } finally {
        running = null;
      }
    })());
  const timer = setInterval(() => void runOnce(), everyMs);
  timer.unref();
  return {
    runOnce,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
