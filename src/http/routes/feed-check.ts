import type { FastifyInstance } from 'fastify';
import { checkFeed } from '../../domain/feed-check.js';
import { authenticate } from '../../domain/keys.js';
import { AppError } from '../../errors/app-error.js';
import { FEED_CHECK_TARGETS, type FeedCheckTarget } from '../../model/feed-rules.js';
import type { Database } from '../../domain/records.js';
import { parseExportParams } from '../export-params.js';
import { firstString, publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { feedCheckSchema } from '../schemas/feed-check.js';

/** GET /api/export/check (CONTRACT §14): a target's rules over the latest list, as JSON. */
export function registerFeedCheckRoute(app: FastifyInstance, db: Database, gate: RequestGate): void {
  publicRoute(app, '/api/export/check', feedCheckSchema, async (request, reply) => {
    const lookup = await gate.admit(request, () => authenticate(db, firstString((request.query as Record<string, unknown>).key)));
    const params = parseExportParams(request.query, FEED_CHECK_TARGETS);
    if (params.format === null) throw new AppError('invalid_parameter', `format is required: one of ${FEED_CHECK_TARGETS.join(', ')} (any case)`);
    const result = await checkFeed(db, lookup, { target: params.format as FeedCheckTarget, onlyAvailable: params.onlyAvailable, profileId: params.profileId });
    reply.header('Cache-Control', 'private, no-cache');
    return result;
  });
}
