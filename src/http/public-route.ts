import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { AppError } from '../errors/app-error.js';

const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * Registers a public GET address (HEAD answered by the same handler) and a 405 answer with
 * `Allow` for every other method, so the method check comes first (CONTRACT §3).
 */
export function publicRoute(
  app: FastifyInstance,
  url: string,
  schema: FastifySchema,
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
): void {
  app.route({ method: ['GET', 'HEAD'], url, schema, handler });
  app.route({
    method: [...OTHER_METHODS],
    url,
    schema: { hide: true } as FastifySchema,
    // A body on a wrong method must not be parsed (or refused) before the 405.
    preParsing: async (_request, _reply, payload) => payload,
    handler: async () => {
      throw new AppError('method_not_allowed', 'this address answers GET and HEAD only', { allow: 'GET, HEAD' });
    },
  });
}
