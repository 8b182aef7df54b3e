import type { FastifyInstance } from 'fastify';
import { authenticate } from '../../domain/keys.js';
import { firstString, publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { deliveriesSchema } from '../schemas/deliveries.js';

/** `GET /api/me/deliveries` (CONTRACT §12): the store's ledger, newest first, a page at a time. */
export function registerDeliveriesRoute(app: FastifyInstance, store: Parameters<typeof authenticate>[0], gate: RequestGate): void {
  publicRoute(app, '/api/me/deliveries', deliveriesSchema, async (request, reply) => {
    const lookup = await gate.admit(request, () => authenticate(store, firstString(request.headers['x-api-key'])));
    const query = (request.query ?? {}) as Record<string, unknown>;
    const page = await app.deliveries.page(lookup.store.id, firstString(query.limit), firstString(query.before));
    reply.header('Cache-Control', 'no-store');
    return {
      deliveries: page.deliveries.map(({ store_id: _store, ...d }) => ({ ...d, at: d.at.toISOString() })),
      next_before: page.next_before,
    };
  });
}
