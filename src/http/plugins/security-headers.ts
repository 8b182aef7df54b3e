import type { FastifyInstance } from 'fastify';

/** CONTRACT §4: on every response, errors and 404s included; RateLimit headers where a quota was counted. */
export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('X-Content-Type-Options', 'nosniff');
    const limit = request.rateLimit;
    if (limit) {
      // IETF httpapi RateLimit header fields draft: policy quota q over window w; remaining r, reset t.
      reply.header('RateLimit-Policy', `"store";q=${limit.limit};w=60`);
      reply.header('RateLimit', `"store";r=${limit.remaining};t=${Math.max(0, Math.ceil(limit.resetInMs / 1000))}`);
    }
    return payload;
  });
}
