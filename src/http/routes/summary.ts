import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../domain/records.js';
import { beginDelivery } from '../deliveries.js';
import { parseExportParams } from '../export-params.js';
import { admitKey } from '../key-access.js';
import { publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { summaryExportSchema } from '../schemas/exports.js';
import { sendExport, type ExportDelivery } from '../send-export.js';

/** Address 3 of CONTRACT §3: the summary matrix workbook (§7), through the same export path as every file. */
export function registerSummaryRoute(app: FastifyInstance, db: Database, gate: RequestGate, delivery: ExportDelivery): void {
  const serve = async (request: FastifyRequest, reply: FastifyReply, fromAddress: string | undefined) => {
    const lookup = await admitKey(request, db, gate, { address: 'summary', fromAddress, basic: false, exportParams: { formats: ['xlsx'], defaultFormat: 'xlsx' } });
    const note = beginDelivery(app.deliveries, request, reply, lookup.store.id, lookup.key.id, 'summary');
    const { onlyAvailable, profileId } = parseExportParams(request.query, ['xlsx']);
    const resolved = await delivery.exports.resolve({ store: lookup.store, list: lookup.latest }, { endpoint: 'summary', format: 'xlsx', onlyAvailable, profileId });
    note.served(resolved.variant);
    return sendExport(request, reply, delivery, resolved);
  };
  publicRoute(app, '/WebApi/SummaryExportLatestGet/:api_key', summaryExportSchema, (request, reply) =>
    serve(request, reply, (request.params as { api_key?: string }).api_key),
  );
  publicRoute(app, '/WebApi/SummaryExportLatestGet', { hide: true } as never, (request, reply) => serve(request, reply, undefined));
}
