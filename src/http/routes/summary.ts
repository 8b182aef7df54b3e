import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../../domain/keys.js';
import { planExport } from '../../domain/exports.js';
import type { Profile } from '../../domain/profile.js';
import { getProfileForStore } from '../../domain/profiles.js';
import { renderSummaryMatrix, SUMMARY_CONTENT_TYPE } from '../../formats/xlsx/summary-writer.js';
import type { RenderCache } from '../../render-cache/interface.js';
import type { Store } from '../../store/types.js';
import { parseExportParams } from '../export-params.js';
import { publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { summaryExportSchema } from '../schemas/exports.js';
import { exportFileName, renderCacheOf, sendExport, type ExportVariant } from '../send-export.js';

/** Address 3 of CONTRACT §3: the summary matrix workbook (§7), cached like every export. */
export function registerSummaryRoute(app: FastifyInstance, store: Store, gate: RequestGate, cache: RenderCache = renderCacheOf(app)): void {
  const serve = async (request: FastifyRequest, reply: FastifyReply, presentedKey: string | undefined) => {
    const lookup = await gate.admit(request, () => authenticate(store, presentedKey));
    const params = parseExportParams(request.query, ['xlsx']);
    const exportRequest = { onlyAvailable: params.onlyAvailable, profileId: params.profileId };
    const profile = params.profileId === null ? null : await getProfileForStore(store, lookup.store.id, params.profileId);
    // Without a list, planning answers price_list_not_found (the domain's one wording of it).
    if (!lookup.latest) await planExport(store, lookup, exportRequest);
    const list = lookup.latest!;
    const variantOf = (planned: Profile | null): ExportVariant => ({
      endpoint: 'summary',
      storeId: lookup.store.id,
      priceListId: list.id,
      version: list.version,
      format: 'xlsx',
      profileId: planned?.id ?? null,
      profileRevision: planned?.revision ?? null,
      onlyAvailable: params.onlyAvailable,
    });
    return sendExport(request, reply, {
      variant: variantOf(profile),
      publishedAt: list.published_at,
      fileName: () => exportFileName(lookup.store.id, list.published_at, 'xlsx', '-summary'),
      prepare: async () => {
        const plan = await planExport(store, lookup, exportRequest);
        return { variant: variantOf(plan.profile), contentType: SUMMARY_CONTENT_TYPE, body: () => renderSummaryMatrix(plan.readBatches, plan.meta) };
      },
    }, cache);
  };
  publicRoute(app, '/WebApi/SummaryExportLatestGet/:api_key', summaryExportSchema, (request, reply) =>
    serve(request, reply, (request.params as { api_key?: string }).api_key),
  );
  publicRoute(app, '/WebApi/SummaryExportLatestGet', { hide: true } as never, (request, reply) => serve(request, reply, undefined));
}
