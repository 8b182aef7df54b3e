import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors/app-error.js';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Every admin request needs `Authorization: Bearer <ADMIN_TOKEN>`, unknown addresses included
 * (so the route table cannot be probed without the token). The token and the presented value
 * are compared as SHA-256 digests: equal lengths for timingSafeEqual, and no timing hint about
 * the token's length or its first differing character.
 */
export function registerAdminAuth(app: FastifyInstance, token: string): void {
  const expected = digest(token);
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
    if (!match || !timingSafeEqual(digest(match[1]), expected)) {
      // Logged without the header: only that a refusal happened, and on which route.
      request.log.warn({ route: request.routeOptions.url ?? '(unmatched)' }, 'admin token missing or wrong');
      throw new AppError('unauthorized', 'send Authorization: Bearer <ADMIN_TOKEN>');
    }
  });
}
