import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientClassOf } from '../domain/client-class.js';
import type { DeliveryService } from '../domain/deliveries.js';

/** What a route learns of an export after its checks: what the ledger records as served. */
export interface ServedVariant {
  format: string;
  profileId: number | null;
  onlyAvailable: boolean;
  version: number;
}

/** One export request being recorded; `served` fills in what the checks found. */
export interface DeliveryNote {
  served(variant: ServedVariant): void;
}

const NOTHING: DeliveryNote = { served: () => undefined };

/**
 * The request-path side of the ledger (CONTRACT §12). A route calls `begin` once the key is
 * accepted (so a wrong or revoked key is never recorded: its request is refused before this);
 * the record is queued when the response closes, with what the connection saw: its status,
 * the bytes written for it, and whether it was handed over whole ('close' with
 * `writableFinished`) or cut. Queuing is all the request pays; the ledger writes in batches.
 */
export function beginDelivery(
  service: DeliveryService, request: FastifyRequest, reply: FastifyReply, who: { storeId: string; keyId: string }, address: 'prices' | 'summary' | 'changes',
): DeliveryNote {
  if (!service.recording) return NOTHING;
  const response = reply.raw;
  const socket = response.socket;
  const bytesBefore = socket?.bytesWritten ?? 0;
  const at = service.window.now();
  let variant: ServedVariant | null = null;
  response.on('close', () => {
    service.record({
      store_id: who.storeId,
      key_id: who.keyId,
      at,
      address,
      format: variant?.format ?? null,
      profile_id: variant?.profileId ?? null,
      only_available: variant?.onlyAvailable ?? null,
      version: variant?.version ?? null,
      status: response.statusCode,
      bytes_sent: Math.max(0, (socket?.bytesWritten ?? 0) - bytesBefore),
      finished: response.writableFinished,
      duration_ms: Math.round(reply.elapsedTime),
      client_class: clientClassOf(request.headers['user-agent']),
      client_address: request.ip,
    });
  });
  return { served: (served) => { variant = served; } };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The delivery ledger and consumers (CONTRACT §12). */
    deliveries: DeliveryService;
  }
}
