import type { FastifyInstance } from 'fastify';
import { noopMetrics, type Metrics } from '../../metrics/interface.js';

/**
 * Decorates the app with its metrics and counts every answered request by route pattern (never
 * the address: a key may travel in it) and status, with its latency.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.decorate('metrics', metrics);
  // Metrics off: no hook at all. A callback hook, not an async one: no promise per request.
  if (metrics === noopMetrics) return;
  app.addHook('onResponse', (request, reply, done) => {
    metrics.httpRequest(request.method, request.routeOptions.url ?? '(unmatched)', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's metrics (no-op when metrics are off); see src/metrics/interface.ts. */
    metrics: Metrics;
  }
}
