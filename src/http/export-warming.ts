import type { FastifyInstance } from 'fastify';
import type { DemandService, WarmPlan } from '../domain/variant-demand.js';
import { PublicationWarmer } from '../render-cache/publication-warmer.js';
import { renderSlots } from '../render-cache/render-slots.js';
import { cacheKey, renderSource } from './export-cache.js';
import type { ExportDelivery } from './send-export.js';

/**
 * Renders at once while warming one store: the renders of a list mostly wait on its page reads
 * (SQLite's page threads, PostgreSQL's process), so two keep both cores of a small host busy
 * without starving the requests being served.
 */
export const WARM_RENDERS_AT_ONCE = 2;

/**
 * Stores warmed at once. One store at a time, PostgreSQL's storm of 5,000 republished stores
 * left the warming 96 s behind the last commit (1,300 stores' hot variants not yet rendered): a
 * store's warm is mostly round trips (its hot variants, its list, its pages). Four at once kept
 * up to within a second (bench/RESULTS.md, "The publish storm on PostgreSQL", 2026-11-26).
 */
export const WARM_STORES_AT_ONCE = 4;

/**
 * Renders at once over every store being warmed: four stores' one hot variant each (the storm
 * as measured), or two stores' two. So several large stores published together hold at most four
 * renders' buffers (a 1M-item render peaks at +75–150 MiB, bench/RESULTS.md), not eight.
 */
export const WARM_RENDERS_IN_ALL = 4;

/**
 * "Never render while a fetcher waits" (issue #16): after each publication, by any process, this
 * instance renders every variant of that store asked for in the last 7 days (on any instance),
 * newest demand first, into its own cache, with the gzip/br copies they were asked in — through
 * the same resolve/open as a request (no key is involved: the subject is the store's latest list).
 * With WARM_SCOPE=instance, only the variants this instance served itself: behind a load
 * balancer that routes each key to one instance, the others would render them for nobody.
 * Returns the warmer, whose `idle()` tells tests and the bench that the work is done.
 */
export function registerExportWarming(app: FastifyInstance, { exports, cache }: ExportDelivery, demand: DemandService, scope: 'fleet' | 'instance' = 'fleet'): PublicationWarmer {
  // Without the message: a driver's message may quote a statement parameter.
  const logFailure = (what: string) => (error: unknown) =>
    app.log.warn({ err: { type: (error as Error).name, code: (error as { code?: string }).code } }, what);
  const warmOne = async ({ resolved, codings }: WarmPlan) => {
    const key = cacheKey(resolved.variant);
    // Already cached or rendering (a request came first): warm() just waits for it.
    await cache.warm(key, app.metrics.timeRender(resolved.variant.format, renderSource(exports, resolved)));
    for (const coding of codings) if (coding !== 'identity') cache.want(key, coding);
  };
  const inRenderSlot = renderSlots(WARM_RENDERS_IN_ALL);
  const warmer = new PublicationWarmer({
    warm: async (storeId) => {
      const started = performance.now();
      const { publishedAt, plans } = await demand.hotExports(storeId, { servedHere: scope === 'instance' });
      // One line per publication (never per store): what was warmed, and that the work is done.
      if (plans.length === 0) return void app.log.info({ storeId, variants: 0 }, 'hot variants warmed');
      const { version } = plans[0].resolved.variant;
      cache.noteLatest(storeId, version);
      let next = 0;
      const worker = async () => {
        while (next < plans.length) {
          const plan = plans[next++];
          await inRenderSlot(() => warmOne(plan)).catch(logFailure('render cache warmer: a variant failed to render'));
        }
      };
      await Promise.all(Array.from({ length: Math.min(WARM_RENDERS_AT_ONCE, plans.length) }, worker));
      if (publishedAt) app.metrics.warmerLag((Date.now() - publishedAt.getTime()) / 1000);
      app.log.info({ storeId, version, variants: plans.length, ms: Math.round(performance.now() - started) }, 'hot variants warmed');
    },
    onError: logFailure('render cache warmer failed'),
    storesAtOnce: WARM_STORES_AT_ONCE,
  });
  const feed = demand.publicationFeed();
  app.addHook('onReady', async () => {
    feed.start(
      (publications) => {
        for (const p of publications) cache.noteLatest(p.storeId, p.version);
        warmer.published(publications);
      },
      logFailure('publication feed: connection lost, listening again'),
    );
  });
  app.addHook('onClose', async () => {
    await feed.close();
    await warmer.stop();
    await demand.close();
  });
  return warmer;
}
