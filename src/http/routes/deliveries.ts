import type { FastifyInstance } from 'fastify';
import { authenticate } from '../../domain/keys.js';
import { AppError } from '../../errors/app-error.js';
import type { LedgerCursor } from '../../store/delivery-types.js';
import type { Store } from '../../store/types.js';
import { publicRoute } from '../public-route.js';
import type { RequestGate } from '../request-gate.js';
import { deliveriesSchema } from '../schemas/deliveries.js';
import { firstString } from './exports.js';

const MAX_LIMIT = 1000;

/** `next_before`: the last record's time and id, so records of one millisecond never fall between pages. */
const cursorOf = (at: Date, id: number): string => `${at.toISOString()}~${id}`;

function parseBefore(text: string | undefined): LedgerCursor | null {
  if (text === undefined || text === '') return null;
  const [time, id, ...rest] = text.split('~');
  const at = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.test(time) ? new Date(time) : new Date(NaN);
  if (rest.length > 0 || Number.isNaN(at.getTime()) || (id !== undefined && !/^\d{1,15}$/.test(id))) {
    throw new AppError('invalid_parameter', 'before must be a next_before value from an earlier page, or an RFC 3339 time such as 2026-11-22T07:00:00Z');
  }
  // A bare time: every record of that instant and later is excluded.
  return { at, id: id === undefined ? 0 : Number(id) };
}

function parseLimit(text: string | undefined): number {
  if (text === undefined || text === '') return 100;
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > MAX_LIMIT) {
    throw new AppError('invalid_parameter', `limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  return Number(text);
}

/** `GET /api/me/deliveries` (CONTRACT §12): the store's ledger, newest first, a page at a time. */
export function registerDeliveriesRoute(app: FastifyInstance, store: Store, gate: RequestGate): void {
  publicRoute(app, '/api/me/deliveries', deliveriesSchema, async (request, reply) => {
    const lookup = await gate.admit(request, () => authenticate(store, firstString(request.headers['x-api-key'])));
    const query = (request.query ?? {}) as Record<string, unknown>;
    const limit = parseLimit(firstString(query.limit));
    const before = parseBefore(firstString(query.before));
    const page = await store.deliveries.ledger.page(lookup.store.id, limit, before);
    reply.header('Cache-Control', 'no-store');
    const last = page.at(-1);
    return {
      deliveries: page.map(({ store_id: _store, ...d }) => ({ ...d, at: d.at.toISOString() })),
      next_before: page.length === limit && last ? cursorOf(last.at, last.id) : null,
    };
  });
}
