import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientClassOf } from '../domain/client-class.js';
import { listConsumers, type Consumer, type ConsumerWindow } from '../domain/consumers.js';
import type { DeliveryLedger } from '../domain/ledger.js';
import type { DeliveryRepositories } from '../store/delivery-types.js';
import type { KeyLookup } from '../store/types.js';

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
 * `writableFinished`) or cut. Queuing is all the request pays; DeliveryLedger writes in batches.
 */
export class DeliveryServices {
  constructor(
    private readonly ledger: DeliveryLedger | null,
    private readonly repositories: DeliveryRepositories,
    private readonly window: ConsumerWindow,
  ) {}

  get enabled(): boolean {
    return this.ledger !== null;
  }

  begin(request: FastifyRequest, reply: FastifyReply, lookup: KeyLookup, address: 'prices' | 'summary'): DeliveryNote {
    const ledger = this.ledger;
    if (!ledger) return NOTHING;
    const response = reply.raw;
    const socket = response.socket;
    const bytesBefore = socket?.bytesWritten ?? 0;
    const at = this.window.now();
    let variant: ServedVariant | null = null;
    response.once('close', () => {
      ledger.record({
        store_id: lookup.store.id,
        key_id: lookup.key.id,
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

  /** Writes the queued records now (tests and shutdown; otherwise the ledger's timer does). */
  async flush(): Promise<void> {
    await this.ledger?.flush();
  }

  consumers(lookup: KeyLookup): Promise<Consumer[]> {
    return listConsumers(this.repositories, lookup.store.id, lookup.latest, this.window);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The delivery ledger and consumers (CONTRACT §12). */
    deliveries: DeliveryServices;
  }
}
