import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../domain/records.js';
import { beginDelivery } from '../deliveries.js';
import { parseExportParams } from '../export-params.js';
import { admitKey } from '../key-access.js';
import { firstString, publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { campaignDataSchema, exportLatestSchema } from '../schemas/exports.js';
import { sendExport, type ExportDelivery } from '../send-export.js';

/** Addresses 2 and 4 of CONTRACT §3: the latest price list in any format, legacy CSV by default. */
export function registerExportRoutes(app: FastifyInstance, db: Database, gate: RequestGate, delivery: ExportDelivery): void {
  const serve = async (request: FastifyRequest, reply: FastifyReply, fromAddress: string | undefined, basic = false) => {
    const exportParams = { formats: delivery.exports.formats, defaultFormat: 'csv' };
    const lookup = await admitKey(request, db, gate, { address: 'prices', fromAddress, basic, exportParams });
    const note = beginDelivery(app.deliveries, request, reply, lookup.store.id, lookup.key.id, 'prices');
    const { format, onlyAvailable, profileId, version } = parseExportParams(request.query, delivery.exports.formats, true);
    const resolved = await delivery.exports.resolve({ store: lookup.store, list: lookup.latest }, { endpoint: 'prices', format, onlyAvailable, profileId, version });
    note.served(resolved.variant);
    return sendExport(request, reply, delivery, resolved);
  };
  const formats = delivery.exports.formats;
  publicRoute(app, '/WebApi/CampaignDataLatestGet/:api_key', campaignDataSchema(formats), (request, reply) =>
    serve(request, reply, (request.params as { api_key?: string }).api_key),
  );
  // The empty segment: the legacy address called without a key (401 missing_key, not 404).
  publicRoute(app, '/WebApi/CampaignDataLatestGet', { hide: true } as never, (request, reply) => serve(request, reply, undefined));
  publicRoute(app, '/api/export/latest', exportLatestSchema(formats), (request, reply) =>
    serve(request, reply, firstString((request.query as Record<string, unknown>).key), true),
  );
}
