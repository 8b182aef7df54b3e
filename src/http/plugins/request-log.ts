import type { FastifyInstance, FastifyRequest } from 'fastify';
import { noopMetrics, type Metrics } from '../../metrics/interface.js';

/**
 * One log line per answered request (and its count and latency in the metrics, and `answered`), naming the route pattern — never the address, whose path
 * or query may carry a key. (The framework's own request logging is off for that reason.)
 */
export function registerRequestLog(
  app: FastifyInstance, message = 'request', metrics: Metrics = noopMetrics, answered?: (request: FastifyRequest) => void,
): void {
  // A callback hook (no promise per answer), like the security headers' onSend.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? '(unmatched)';
    const ms = reply.elapsedTime;
    request.log.info({ method: request.method, route, status: reply.statusCode, ms: Math.round(ms) }, message);
    // The request metrics ride on this hook: a second onResponse hook cost a measurable share of a 304.
    metrics.httpRequest(request.method, route, reply.statusCode, ms / 1000);
    // And whatever else is done once an answer is over (the delivery ledger's record), for the same reason.
    answered?.(request);
    done();
  });
}
