import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
 * The deliveries of a connection not yet recorded (pipelined requests can make them several), as
 * a list threaded through them: the newest here, each older one its `older`. A Set per connection
 * cost ~0.5 µs per answer (adding and deleting), a quarter of what the ledger cost a 304.
 */
const OPEN = Symbol('deliveries open on this connection');
/** Whether the connection has its 'close' listener (the list may be empty between answers). */
const WATCHED = Symbol('connection watched for cut deliveries');
type WatchedSocket = Socket & { [OPEN]?: Delivery | null; [WATCHED]?: true };

/**
 * One answer to record, once: when the response finished (the onResponse hook, after
 * 'finish') or, for a response cut before its end, when its connection closed. Not a 'close'
 * listener on each response: adding, calling and removing one cost ~2 % of a 304's CPU
 * (bench/RESULTS.md, "The ledger's runs"); a connection gets one listener, whatever it carries.
 */
class Delivery implements DeliveryNote {
  private variant: ServedVariant | null = null;
  private recorded = false;
  /** Neighbours in the connection's list of open deliveries. */
  older: Delivery | null = null;
  newer: Delivery | null = null;
  private readonly at: Date;
  private readonly bytesBefore: number;

  constructor(
    private readonly service: DeliveryService, private readonly request: FastifyRequest, private readonly reply: FastifyReply,
    private readonly who: { storeId: string; keyId: string }, private readonly address: 'prices' | 'summary' | 'changes',
    private readonly socket: WatchedSocket | null,
  ) {
    this.at = service.window.now();
    this.bytesBefore = socket?.bytesWritten ?? 0;
  }

  served(variant: ServedVariant): void {
    this.variant = variant;
  }

  record(): void {
    if (this.recorded) return;
    this.recorded = true;
    if (this.socket) unwatch(this.socket, this);
    const response = this.reply.raw;
    const variant = this.variant;
    this.service.record({
      store_id: this.who.storeId,
      key_id: this.who.keyId,
      at: this.at,
      address: this.address,
      format: variant?.format ?? null,
      profile_id: variant?.profileId ?? null,
      only_available: variant?.onlyAvailable ?? null,
      version: variant?.version ?? null,
      status: response.statusCode,
      bytes_sent: Math.max(0, (this.socket?.bytesWritten ?? 0) - this.bytesBefore),
      finished: response.writableFinished,
      duration_ms: Math.round(this.reply.elapsedTime),
      client_class: clientClassOf(this.request.headers['user-agent']),
      client_address: this.request.ip,
    });
  }
}

/** Adds to the connection's open deliveries; its first gives it one 'close' listener to record those it cut. */
function watch(socket: WatchedSocket, delivery: Delivery): void {
  if (!socket[WATCHED]) {
    socket[WATCHED] = true;
    socket.once('close', () => {
      // Oldest first, as they were asked (record() unlinks each).
      const cut: Delivery[] = [];
      for (let open = socket[OPEN]; open; open = open.older) cut.push(open);
      for (let i = cut.length - 1; i >= 0; i--) cut[i].record();
    });
  }
  const newest = socket[OPEN] ?? null;
  delivery.older = newest;
  if (newest) newest.newer = delivery;
  socket[OPEN] = delivery;
}

function unwatch(socket: WatchedSocket, delivery: Delivery): void {
  const { older, newer } = delivery;
  if (newer) newer.older = older;
  else socket[OPEN] = older;
  if (older) older.newer = newer;
  delivery.older = delivery.newer = null;
}

/**
 * The request-path side of the ledger (CONTRACT §12). A route calls `begin` once the key is
 * accepted (so a wrong or revoked key is never recorded: its request is refused before this);
 * the record is queued when the response ends, with what the connection saw: its status, the
 * bytes written for it, and whether it was handed over whole (`writableFinished`) or cut.
 * Queuing is all the request pays; the ledger writes in batches.
 */
export function beginDelivery(
  service: DeliveryService, request: FastifyRequest, reply: FastifyReply, who: { storeId: string; keyId: string }, address: 'prices' | 'summary' | 'changes',
): DeliveryNote {
  if (!service.recording) return NOTHING;
  // inject()'s stand-in socket is no emitter; its responses always finish.
  const raw = reply.raw.socket as WatchedSocket | null;
  const socket = raw && typeof raw.once === 'function' ? raw : null;
  const delivery = new Delivery(service, request, reply, who, address, socket);
  request.delivery = delivery;
  if (socket) watch(socket, delivery);
  return delivery;
}

/**
 * Lets routes begin deliveries on this app's requests; answers what records a finished one, for
 * the app's one onResponse hook (plugins/request-log.ts: a second hook cost a measurable share
 * of a 304). With the ledger off no route begins one, and the call finds nothing to record.
 */
export function recordDeliveries(app: FastifyInstance): (request: FastifyRequest) => void {
  app.decorateRequest('delivery', null);
  return (request) => request.delivery?.record();
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The delivery ledger and consumers (CONTRACT §12). */
    deliveries: DeliveryService;
  }
  interface FastifyRequest {
    /** The answer being recorded in the ledger, if the route began one. */
    delivery: { record(): void } | null;
  }
}
