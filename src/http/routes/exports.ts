import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticate } from '../../domain/keys.js';
import { planExport } from '../../domain/exports.js';
import { FORMAT_WRITERS } from '../../formats/registry.js';
import type { Store } from '../../store/types.js';
import { parseExportParams } from '../export-params.js';
import { publicRoute } from '../public-route.js';
import { exportFileName, sendExport } from '../send-export.js';
import { campaignDataSchema, exportLatestSchema } from '../schemas/exports.js';
import type { RequestGate } from '../request-gate.js';

/** Addresses 2 and 4 of CONTRACT §3: the latest price list in any format, legacy CSV by default. */
export function registerExportRoutes(app: FastifyInstance, store: Store, gate: RequestGate): void {
  const serve = async (request: FastifyRequest, reply: FastifyReply, presentedKey: string | undefined) => {
    const lookup = await gate.admit(request, () => authenticate(store, presentedKey));
    const params = parseExportParams(request.query);
    const plan = await planExport(store, lookup, { onlyAvailable: params.onlyAvailable, profileId: params.profileId });
    const writer = FORMAT_WRITERS[params.format ?? 'csv'];
    const list = lookup.latest!;
    return sendExport(request, reply, {
      variant: {
        endpoint: 'prices',
        storeId: lookup.store.id,
        priceListId: list.id,
        version: list.version,
        format: writer.format,
        profileId: plan.profile?.id ?? null,
        profileRevision: plan.profile?.revision ?? null,
        onlyAvailable: params.onlyAvailable,
      },
      publishedAt: list.published_at,
      contentType: writer.contentType(plan.meta),
      fileName: exportFileName(lookup.store.id, list.published_at, writer.extension),
      body: () => writer.render(plan.readBatches(), plan.meta),
    });
  };

  const campaign = (request: FastifyRequest, reply: FastifyReply) => serve(request, reply, (request.params as { api_key?: string }).api_key);
  publicRoute(app, '/WebApi/CampaignDataLatestGet/:api_key', campaignDataSchema, campaign);
  // The empty segment: the legacy address called without a key (401 missing_key, not 404).
  publicRoute(app, '/WebApi/CampaignDataLatestGet', { hide: true } as never, (request, reply) => serve(request, reply, undefined));

  publicRoute(app, '/api/export/latest', exportLatestSchema, (request, reply) => {
    const key = (request.query as Record<string, unknown>).key;
    return serve(request, reply, firstString(key));
  });
}

export const firstString = (value: unknown): string | undefined => {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : undefined;
};
