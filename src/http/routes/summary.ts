import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../../domain/keys.js';
import { renderSummaryMatrix, SUMMARY_CONTENT_TYPE } from '../../formats/xlsx/summary-writer.js';
import type { RenderCache } from '../../render-cache/interface.js';
import type { Store } from '../../store/types.js';
import { checkedExport } from '../checked-export.js';
import { parseExportParams } from '../export-params.js';
import { publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { summaryExportSchema } from '../schemas/exports.js';
import { renderCacheOf, sendExport } from '../send-export.js';

/** Address 3 of CONTRACT §3: the summary matrix workbook (§7), cached like every export. */
export function registerSummaryRoute(app: FastifyInstance, store: Store, gate: RequestGate, cache: RenderCache = renderCacheOf(app)): void {
  const serve = async (request: FastifyRequest, reply: FastifyReply, presentedKey: string | undefined) => {
    const lookup = await gate.admit(request, () => authenticate(store, presentedKey));
    const delivery = app.deliveries.begin(request, reply, lookup, 'summary');
    const params = parseExportParams(request.query, ['xlsx']);
    const file = await checkedExport(store, lookup, { onlyAvailable: params.onlyAvailable, profileId: params.profileId }, {
      endpoint: 'summary',
      format: 'xlsx',
      extension: 'xlsx',
      fileSuffix: '-summary',
      columnsOnly: false,
      render: (plan) => ({ contentType: SUMMARY_CONTENT_TYPE, body: () => renderSummaryMatrix(plan.readBatches, plan.meta) }),
    });
    delivery.served(file.variant);
    return sendExport(request, reply, file, cache);
  };
  publicRoute(app, '/WebApi/SummaryExportLatestGet/:api_key', summaryExportSchema, (request, reply) =>
    serve(request, reply, (request.params as { api_key?: string }).api_key),
  );
  publicRoute(app, '/WebApi/SummaryExportLatestGet', { hide: true } as never, (request, reply) => serve(request, reply, undefined));
}
