import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../metrics/interface.js';

/**
 * Decorates the app with its metrics and counts every answered request by route pattern (never
 * the address: a key may travel in it) and status, with its latency.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.decorate('metrics', metrics);
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequest(request.method, request.routeOptions.url ?? '(unmatched)', reply.statusCode, reply.elapsedTime / 1000);
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's metrics (no-op when metrics are off); see src/metrics/interface.ts. */
    metrics: Metrics;
  }
}
