import type { FastifyInstance } from 'fastify';

/** The counting window of CONTRACT §8, in seconds, as the RateLimit-Policy `w` parameter. */
const WINDOW_SECONDS = 60;

/**
 * CONTRACT §4: on every response, errors and 404s included. CONTRACT §8: RateLimit headers on
 * every response that was counted against a quota — 2xx/304 and 429 against the store's, a
 * wrong key and its 429 against the client's wrong-key allowance.
 */
export function registerSecurityHeaders(app: FastifyInstance): void {
  // A callback hook, not an async one: every answer passes here, and an async hook costs each a
  // promise and a microtask turn (a measurable share of a 304, bench/RESULTS.md).
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('X-Content-Type-Options', 'nosniff');
    const quota = request.rateLimit;
    if (quota) {
      // IETF httpapi "RateLimit header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-09):
      // the policy names quota q over window w; the current state names remaining r and reset t (seconds).
      reply.header('RateLimit-Policy', `"${quota.policy}";q=${quota.limit};w=${WINDOW_SECONDS}`);
      reply.header('RateLimit', `"${quota.policy}";r=${quota.remaining};t=${Math.max(0, Math.ceil(quota.resetInMs / 1000))}`);
    }
    done(null, payload);
  });
}
