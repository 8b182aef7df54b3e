import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../domain/records.js';
import { beginDelivery } from '../deliveries.js';
import { parseExportParams, parseSince } from '../export-params.js';
import { admitKey } from '../key-access.js';
import { firstString, publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { exportChangesSchema } from '../schemas/exports.js';
import { sendExport, type ExportDelivery } from '../send-export.js';

/** CONTRACT §11: what changed since a version, through the same export path as every file. */
export function registerChangesRoute(app: FastifyInstance, db: Database, gate: RequestGate, delivery: ExportDelivery): void {
  const formats = delivery.exports.changesFormats;
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const fromAddress = firstString((request.query as Record<string, unknown>).key);
    const lookup = await admitKey(request, db, gate, { address: 'changes', fromAddress, basic: true, exportParams: { formats, defaultFormat: 'json' } });
    const note = beginDelivery(app.deliveries, request, reply, lookup.store.id, lookup.key.id, 'changes');
    const { format, onlyAvailable, profileId } = parseExportParams(request.query, formats);
    const since = parseSince(request.query);
    const resolved = await delivery.exports.resolveChanges({ store: lookup.store, list: lookup.latest }, { format, onlyAvailable, profileId, since });
    note.served(resolved.variant);
    reply.header('X-Since-Version', String(since));
    return sendExport(request, reply, delivery, resolved);
  };
  publicRoute(app, '/api/export/changes', exportChangesSchema(formats), serve);
}
