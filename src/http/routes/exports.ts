import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../../domain/keys.js';
import type { ExportRequest } from '../../domain/exports.js';
import { FORMAT_WRITERS } from '../../formats/registry.js';
import type { FormatWriter } from '../../formats/types.js';
import type { RenderCache } from '../../render-cache/interface.js';
import { LatestListWarmer } from '../../render-cache/latest-warmer.js';
import type { KeyLookup, PriceListRecord, Store, StoreRecord } from '../../store/types.js';
import { checkedExport } from '../checked-export.js';
import { parseExportParams } from '../export-params.js';
import { publicRoute } from '../public-route.js';
import { cacheKey, renderCacheOf, sendExport, type ExportFile } from '../send-export.js';
import { campaignDataSchema, exportLatestSchema } from '../schemas/exports.js';
import type { RequestGate } from '../request-gate.js';

/** Addresses 2 and 4 of CONTRACT §3: the latest price list in any format, legacy CSV by default. */
export function registerExportRoutes(app: FastifyInstance, store: Store, gate: RequestGate, cache: RenderCache = renderCacheOf(app)): void {
  const serve = async (request: FastifyRequest, reply: FastifyReply, presentedKey: string | undefined) => {
    const lookup = await gate.admit(request, () => authenticate(store, presentedKey));
    const delivery = app.deliveries.begin(request, reply, lookup, 'prices');
    const params = parseExportParams(request.query);
    const file = await priceListExport(store, lookup, FORMAT_WRITERS[params.format ?? 'csv'], { onlyAvailable: params.onlyAvailable, profileId: params.profileId });
    delivery.served(file.variant);
    return sendExport(request, reply, file, cache);
  };

  const campaign = (request: FastifyRequest, reply: FastifyReply) => serve(request, reply, (request.params as { api_key?: string }).api_key);
  publicRoute(app, '/WebApi/CampaignDataLatestGet/:api_key', campaignDataSchema, campaign);
  // The empty segment: the legacy address called without a key (401 missing_key, not 404).
  publicRoute(app, '/WebApi/CampaignDataLatestGet', { hide: true } as never, (request, reply) => serve(request, reply, undefined));

  publicRoute(app, '/api/export/latest', exportLatestSchema, (request, reply) => {
    const key = (request.query as Record<string, unknown>).key;
    return serve(request, reply, firstString(key));
  });

  warmLegacyCsv(app, store, cache);
  app.addHook('onReady', async () => store.startExportThreads?.());
}

/** A price list export in one format (addresses 2 and 4, and the warmer). */
export function priceListExport(store: Store, lookup: KeyLookup, writer: FormatWriter, exportRequest: ExportRequest): Promise<ExportFile> {
  return checkedExport(store, lookup, exportRequest, {
    endpoint: 'prices',
    format: writer.format,
    extension: writer.extension,
    // Every writer but YML reads only the columns.
    columnsOnly: writer.format !== 'yml',
    render: (plan) => ({ contentType: writer.contentType(plan.meta), body: () => writer.render(plan.readBatches(), plan.meta, plan.readRecords) }),
  });
}

interface StoreLatest {
  storeId: string;
  version: number;
  owner: StoreRecord;
  list: PriceListRecord;
}

/** Every store's latest list, in one query. */
async function latestLists(store: Store): Promise<StoreLatest[]> {
  return (await store.listLatestPriceLists()).map(({ store: owner, list }) => ({ storeId: owner.id, version: list.version, owner, list }));
}

/**
 * "The legacy CSV of a new publication is rendered as it is published, before anyone asks":
 * publications come from other processes too (the CLI, another instance), so this instance
 * polls for new latest lists and pre-renders their legacy CSV into its own cache, one at a time.
 */
function warmLegacyCsv(app: FastifyInstance, store: Store, cache: RenderCache): void {
  const warmer = new LatestListWarmer<StoreLatest>({
    listLatest: () => latestLists(store),
    onLatest: (latest) => cache.noteLatest(latest.storeId, latest.version),
    warm: async ({ owner, list }) => {
      // The export reads only the lookup's store and latest list; no key is involved in warming.
      const lookup = { key: null, store: owner, latest: list } as unknown as KeyLookup;
      const file = await priceListExport(store, lookup, FORMAT_WRITERS.csv, { onlyAvailable: false, profileId: null });
      // Already cached (asked for before the warmer came round) or rendering: warm() just waits.
      await cache.warm(cacheKey(file.variant), await file.prepare());
    },
    onError: (error, stage) => app.log.warn({ stage, err: { type: (error as Error).name } }, 'render cache warmer failed'),
  });
  app.addHook('onReady', async () => warmer.start());
  app.addHook('onClose', async () => warmer.stop());
}

export const firstString = (value: unknown): string | undefined => {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : undefined;
};
