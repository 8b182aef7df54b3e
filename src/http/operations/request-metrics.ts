import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../metrics/interface.js';

/**
 * Decorates the app with its metrics, for the routes' small `app.metrics.x()` calls. Requests
 * are counted by the request-log hook (plugins/request-log.ts), by route pattern (never the
 * address: a key may travel in it) and status, with their latency.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.decorate('metrics', metrics);
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's metrics (no-op when metrics are off); see src/metrics/interface.ts. */
    metrics: Metrics;
  }
}
