import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientClassOf, type ClientClass } from '../domain/client-class.js';
import type { DeliveryService, QueuedDelivery } from '../domain/deliveries.js';

/** What a route learns of an export after its checks: what the ledger records as served. */
export interface ServedVariant {
  format: string;
  profileId: number | null;
  onlyAvailable: boolean;
  version: number;
}

/** The addresses whose answers the ledger records (CONTRACT §12). */
export type DeliveryAddress = 'prices' | 'summary' | 'changes';

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
/**
 * The connection's `bytesWritten` when its last answer ended: an answer's bytes are those written
 * since. One read of `bytesWritten` per answer, not one at its start and one at its end: each
 * read crosses into the socket's native handle, ~90 ns (bench/RESULTS.md, "2026-11-26, day").
 */
const COUNTED = Symbol('bytes of the connection counted so far');
/**
 * `_bytesDispatched`: Node's count of the bytes handed to the kernel, which `bytesWritten` adds
 * the queued writes to, after copying the queue into a new array on every read (Writable's
 * `writableBuffer`). With nothing queued (every 304, nearly every finished answer) it is the
 * whole count; where a Node version has no such field, `bytesWritten` answers.
 */
type WatchedSocket = Socket & { [OPEN]?: Delivery | null; [WATCHED]?: true; [COUNTED]?: number; _bytesDispatched?: number };

/**
 * One answer to record, once: when the response finished (the onResponse hook, after
 * 'finish') or, for a response cut before its end, when its connection closed. Not a 'close'
 * listener on each response: adding, calling and removing one cost ~2 % of a 304's CPU
 * (bench/RESULTS.md, "The ledger's runs"); a connection gets one listener, whatever it carries.
 * The object is itself the record the ledger queues (QueuedDelivery), filled in as the answer
 * goes: no Date, no record object and no variant kept per answer.
 */
class Delivery implements DeliveryNote, QueuedDelivery {
  readonly at_ms: number;
  format: string | null = null;
  profile_id: number | null = null;
  only_available: boolean | null = null;
  version: number | null = null;
  status = 0;
  bytes_sent = 0;
  finished = false;
  duration_ms = 0;
  client_class: ClientClass = 'other';
  client_address = '';
  /** Neighbours in the connection's list of open deliveries. */
  older: Delivery | null = null;
  newer: Delivery | null = null;
  private recorded = false;

  constructor(
    private readonly service: DeliveryService, private readonly request: FastifyRequest, private readonly reply: FastifyReply,
    readonly store_id: string, readonly key_id: string, readonly address: DeliveryAddress, private readonly socket: WatchedSocket | null,
  ) {
    this.at_ms = service.nowMs();
  }

  served(variant: ServedVariant): void {
    this.format = variant.format;
    this.profile_id = variant.profileId;
    this.only_available = variant.onlyAvailable;
    this.version = variant.version;
  }

  record(): void {
    if (this.recorded) return;
    this.recorded = true;
    const socket = this.socket;
    if (socket) {
      unwatch(socket, this);
      this.bytes_sent = Math.max(0, countWritten(socket));
    }
    const response = this.reply.raw;
    this.status = response.statusCode;
    this.finished = response.writableFinished;
    this.duration_ms = Math.round(this.reply.elapsedTime);
    this.client_class = clientClassOf(this.request.headers['user-agent']);
    this.client_address = this.request.ip;
    this.service.record(this);
  }
}

/** The bytes written on the connection since it was last counted; counts them. */
function countWritten(socket: WatchedSocket): number {
  const written = (socket.writableLength === 0 ? socket._bytesDispatched : undefined) ?? socket.bytesWritten ?? 0;
  const since = written - (socket[COUNTED] ?? 0);
  socket[COUNTED] = written;
  return since;
}

/**
 * Adds to the connection's open deliveries; its first gives it one 'close' listener to record
 * those it cut, and starts its count of bytes (what earlier, unrecorded answers wrote is no one's).
 */
function watch(socket: WatchedSocket, delivery: Delivery): void {
  if (!socket[WATCHED]) {
    socket[WATCHED] = true;
    countWritten(socket);
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
  service: DeliveryService, request: FastifyRequest, reply: FastifyReply, storeId: string, keyId: string, address: DeliveryAddress,
): DeliveryNote {
  if (!service.recording) return NOTHING;
  // inject()'s stand-in socket is no emitter; its responses always finish.
  const raw = reply.raw.socket as WatchedSocket | null;
  const socket = raw && typeof raw.once === 'function' ? raw : null;
  const delivery = new Delivery(service, request, reply, storeId, keyId, address, socket);
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
  return recordAnswer;
}

/**
 * Records the answer's delivery if it has one. An answer without one on a connection whose
 * answers are recorded (a refused key, another address) is counted there, so its bytes are not
 * charged to the next answer recorded.
 */
export function recordAnswer(request: FastifyRequest): void {
  const delivery = request.delivery;
  if (delivery) return delivery.record();
  const socket = request.raw.socket as WatchedSocket | null;
  if (socket?.[COUNTED] !== undefined) countWritten(socket);
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
