import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIPv4 } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.js';

/**
 * A request id taken from the load balancer must be short and plain: it goes into every log
 * line and back out as a header. A value that looks like one of our keys is never taken.
 */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:+/=-]{1,64}$/;

/** The field naming the request id on every log line of a request (with `X-Request-Id` on its answer). */
export const REQUEST_ID_LOG_LABEL = 'request_id';

/** Whether the peer that sent a request is a proxy TRUST_PROXY names (a hop count trusts the immediate peer). */
export function trustedPeer(trustProxy: Config['trustProxy']): (address: string | undefined) => boolean {
  if (trustProxy === false || trustProxy === 0) return () => false;
  if (typeof trustProxy === 'number') return () => true;
  const trusted = new BlockList();
  for (const entry of trustProxy) {
    const [address, bits] = entry.split('/');
    const type = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (bits === undefined) trusted.addAddress(address, type);
    else trusted.addSubnet(address, Number(bits), type);
  }
  return (address) => {
    if (!address) return false;
    const plain = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
    return trusted.check(plain, isIPv4(plain) ? 'ipv4' : 'ipv6');
  };
}

/**
 * Fastify's `genReqId`: the load balancer's `X-Request-Id` when TRUST_PROXY trusts the peer and
 * the value is safe, else a fresh UUID. So one id follows a request from nginx's log to ours.
 */
export function requestIdGenerator(trustProxy: Config['trustProxy']): (request: IncomingMessage) => string {
  const trusts = trustedPeer(trustProxy);
  return (request) => {
    const presented = request.headers['x-request-id'];
    if (typeof presented === 'string' && SAFE_REQUEST_ID.test(presented) && !/^pex_/i.test(presented) && trusts(request.socket.remoteAddress)) return presented;
    return randomUUID();
  };
}

/** Every answer carries its request id (registered first, so even a 503 while draining has it). */
export function registerRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
}
