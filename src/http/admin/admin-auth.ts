import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors/app-error.js';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

const WINDOW_MS = 60_000;

export interface AdminAuthOptions {
  /** Wrong tokens a client may send per clock minute; past it, every call of that client is 429 until the minute ends. */
  failLimitPerMin: number;
  /** The clock (a seam for tests). */
  now?: () => number;
}

/**
 * Every admin request needs `Authorization: Bearer <ADMIN_TOKEN>`, unknown addresses included
 * (so the route table cannot be probed without the token). The token and the presented value
 * are compared as SHA-256 digests: equal lengths for timingSafeEqual, and no timing hint about
 * the token's length or its first differing character.
 *
 * Wrong tokens are counted per client address and clock minute: over the limit, the client is
 * refused 429 before any comparison (a guesser sent 13,086 in 5 s). The log gets one line for a
 * client's first wrong token in a minute and one summary with the count when the minute is
 * over, not a line per guess.
 */
export function registerAdminAuth(app: FastifyInstance, token: string, options: AdminAuthOptions): AdminTokenCheck {
  const expected = digest(token);
  const now = options.now ?? Date.now;
  let window = -1;
  let failures = new Map<string, number>();

  /** Starts a new minute when the clock has moved on, logging the summary of the one that ended. */
  const rollOver = (minute: number) => {
    if (minute === window) return;
    for (const [client, count] of failures) {
      if (count > 1) app.log.warn({ client, wrongTokens: count }, 'admin token wrong repeatedly in the last minute');
    }
    failures = new Map();
    window = minute;
  };

  const check: AdminTokenCheck = (request, reply) => {
    const at = now();
    rollOver(Math.floor(at / WINDOW_MS));
    const client = request.ip;
    const count = failures.get(client) ?? 0;
    if (count >= options.failLimitPerMin) {
      failures.set(client, count + 1);
      reply.header('Retry-After', String(Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - at) / 1000))));
      throw new AppError('rate_limited', 'too many wrong admin tokens from this client; try again in the next minute');
    }
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
    if (!match || !timingSafeEqual(digest(match[1]), expected)) {
      failures.set(client, count + 1);
      // Logged without the header: only that a refusal happened, and on which route.
      if (count === 0) request.log.warn({ route: request.routeOptions.url ?? '(unmatched)' }, 'admin token missing or wrong');
      throw new AppError('unauthorized', 'send Authorization: Bearer <ADMIN_TOKEN>');
    }
  };
  app.addHook('onRequest', async (request, reply) => check(request, reply));
  return check;
}

/**
 * Throws the AppError a request without the right token gets (401, or 429 past the throttle);
 * returns when the token is right. Also asked by the framework-error answer (admin-errors.ts),
 * which runs before any hook.
 */
export type AdminTokenCheck = (request: FastifyRequest, reply: FastifyReply) => void;

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|localhost)$/i;

/** What is worth a warning at start about how the internal API is exposed (none: nothing to say). */
export function adminExposureWarnings(host: string, token: string): string[] {
  const warnings: string[] = [];
  if (!LOOPBACK.test(host)) warnings.push(`ADMIN_HOST is ${host}, not loopback: the internal API is reachable from other machines`);
  if (token.length < 32 || new Set(token).size === 1) warnings.push('ADMIN_TOKEN is weak (fewer than 32 characters, or one character repeated): use a long random value');
  return warnings;
}
