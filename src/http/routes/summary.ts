import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../../domain/keys.js';
import { planExport } from '../../domain/exports.js';
import { renderSummaryMatrix, SUMMARY_CONTENT_TYPE } from '../../formats/xlsx/summary-writer.js';
import type { Store } from '../../store/types.js';
import { parseExportParams } from '../export-params.js';
import { publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { summaryExportSchema } from '../schemas/exports.js';
import { exportFileName, sendExport } from '../send-export.js';

/** Address 3 of CONTRACT §3: the summary matrix workbook (§7). */
export function registerSummaryRoute(app: FastifyInstance, store: Store, gate: RequestGate): void {
  const serve = async (request: FastifyRequest, reply: FastifyReply, presentedKey: string | undefined) => {
    const lookup = await gate.admit(request, () => authenticate(store, presentedKey));
    const params = parseExportParams(request.query, ['xlsx']);
    const plan = await planExport(store, lookup, { onlyAvailable: params.onlyAvailable, profileId: params.profileId });
    const list = lookup.latest!;
    return sendExport(request, reply, {
      variant: {
        endpoint: 'summary',
        storeId: lookup.store.id,
        priceListId: list.id,
        version: list.version,
        format: 'xlsx',
        profileId: plan.profile?.id ?? null,
        profileRevision: plan.profile?.revision ?? null,
        onlyAvailable: params.onlyAvailable,
      },
      publishedAt: list.published_at,
      contentType: SUMMARY_CONTENT_TYPE,
      fileName: exportFileName(lookup.store.id, list.published_at, 'xlsx', '-summary'),
      body: () => renderSummaryMatrix(plan.readBatches, plan.meta),
    });
  };
  publicRoute(app, '/WebApi/SummaryExportLatestGet/:api_key', summaryExportSchema, (request, reply) =>
    serve(request, reply, (request.params as { api_key?: string }).api_key),
  );
  publicRoute(app, '/WebApi/SummaryExportLatestGet', { hide: true } as never, (request, reply) => serve(request, reply, undefined));
}
