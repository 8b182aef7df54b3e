import type { FastifyInstance } from 'fastify';

/**
 * One log line per answered request, naming the route pattern — never the address, whose path
 * or query may carry a key. (The framework's own request logging is off for that reason.)
 */
export function registerRequestLog(app: FastifyInstance, message = 'request'): void {
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, route: request.routeOptions.url ?? '(unmatched)', status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      message,
    );
  });
}
