import { Type } from 'typebox';
import { PUBLIC_ERROR_CODES } from '../../errors/codes.js';
import { problemResponses } from './problem.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** A consumer of CONTRACT §12, in /api/me. */
export const ConsumerSchema = Type.Object(
  {
    client_class: Type.String({ description: 'From the User-Agent: google, yandex, 1c, bitrix, browser, curl, wget, python-requests or other' }),
    client_address: Type.String(),
    last_fetch_at: Type.String({ format: 'date-time' }),
    last_version: Nullable(Type.Integer({ description: 'The newest version it received whole (200, 206 or 304, sent to its end)' })),
    last_status: Type.Integer(),
    fetches_24h: Type.Integer(),
    behind: Type.Boolean({ description: 'The latest version is newer than last_version and was published more than STALE_AFTER_MIN minutes ago' }),
  },
  { $id: 'Consumer', title: 'Consumer' },
);

const DeliverySchema = Type.Object({
  id: Type.Integer({ description: 'Unique in the ledger and kept; neither consecutive nor in time order (answers stored together share a range of 1,024 ids, and a seldom consumer\'s later answers join its earlier ones\' range): page with `before`, not by id' }),
  at: Type.String({ format: 'date-time' }),
  key_id: Type.String({ description: 'The id of the key used (never the key)' }),
  address: Type.String({ description: '`prices` (addresses 2 and 4) or `summary` (address 3)' }),
  format: Nullable(Type.String()),
  profile_id: Nullable(Type.Integer()),
  only_available: Nullable(Type.Boolean()),
  version: Nullable(Type.Integer()),
  status: Type.Integer(),
  bytes_sent: Type.Integer({ description: 'Bytes written to the connection for this answer, headers included' }),
  finished: Type.Boolean({ description: 'False when the connection closed before the whole answer was sent' }),
  duration_ms: Type.Integer(),
  client_class: Type.String(),
  client_address: Type.String(),
});

export const DeliveriesSchema = Type.Object(
  {
    deliveries: Type.Array(DeliverySchema),
    next_before: Nullable(Type.String({ description: 'Pass as `before` for the next (older) page; null on the last page' })),
  },
  { $id: 'Deliveries', title: 'Deliveries' },
);

export const deliveriesSchema = {
  operationId: 'getDeliveries',
  tags: ['Account'],
  summary: "The store's delivery ledger, newest first",
  description: 'Every answered export request by a valid key of the store, kept LEDGER_DAYS days. Records reach the ledger within about a second.',
  security: [{ ApiKey: [] }],
  querystring: Type.Object({
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    before: Type.Optional(Type.String({ description: "The previous page's next_before, or an RFC 3339 time: only older records" })),
  }),
  response: {
    200: Type.Ref('Deliveries'),
    ...problemResponses(PUBLIC_ERROR_CODES.filter((c) => !['profile_not_found', 'price_list_not_found', 'range_not_satisfiable'].includes(c))),
  },
};
