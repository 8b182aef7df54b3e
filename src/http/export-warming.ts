import type { FastifyInstance } from 'fastify';
import type { ExportRequest } from '../domain/exports.js';
import { LatestListWarmer } from '../render-cache/latest-warmer.js';
import { cacheKey, renderSource } from './export-cache.js';
import type { ExportDelivery } from './send-export.js';

/** What the old links ask for: the legacy CSV, no filter, no profile. */
const LEGACY_CSV: ExportRequest = { endpoint: 'prices', format: null, onlyAvailable: false, profileId: null };

/**
 * "The legacy CSV of a new publication is rendered as it is published, before anyone asks":
 * publications come from other processes too (the CLI, another instance), so this instance
 * polls for new latest lists and pre-renders their legacy CSV into its own cache, one at a time,
 * through the same resolve/open as a request (no key is involved: the subject is `{store, list}`).
 */
export function registerExportWarming(app: FastifyInstance, { exports, cache }: ExportDelivery): void {
  const warmer = new LatestListWarmer({
    listLatest: async () => (await exports.latestLists()).map(({ store, list }) => ({ storeId: store.id, version: list.version, store, list })),
    onLatest: (latest) => cache.noteLatest(latest.storeId, latest.version),
    warm: async ({ store, list }) => {
      const resolved = await exports.resolve({ store, list }, LEGACY_CSV);
      // Already cached (asked for before the warmer came round) or rendering: warm() just waits.
      await cache.warm(cacheKey(resolved.variant), app.metrics.timeRender(resolved.variant.format, renderSource(exports, resolved)));
      app.metrics.warmerLag((Date.now() - list.published_at.getTime()) / 1000);
    },
    onError: (error, stage) => app.log.warn({ stage, err: { type: (error as Error).name } }, 'render cache warmer failed'),
  });
  app.addHook('onReady', async () => warmer.start());
  app.addHook('onClose', async () => warmer.stop());
}
