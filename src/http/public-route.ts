import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods } from 'fastify';
import { AppError } from '../errors/app-error.js';

/** Every method Node parses but GET, HEAD (answered) and CONNECT (not a request for an address). */
export const OTHER_METHODS: readonly string[] = METHODS.filter((m) => !['GET', 'HEAD', 'CONNECT'].includes(m));

/** Fastify knows only the common methods until told: tell it the rest, so they answer 405, not 404. */
export function acceptEveryMethod(app: FastifyInstance): void {
  for (const method of OTHER_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
}

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
    method: OTHER_METHODS as HTTPMethods[],
    url,
    schema: { hide: true } as FastifySchema,
    // A body on a wrong method must not be parsed (or refused) before the 405.
    preParsing: async (_request, _reply, payload) => payload,
    handler: async () => {
      throw new AppError('method_not_allowed', 'this address answers GET and HEAD only', { allow: 'GET, HEAD' });
    },
  });
}

/** The first value of a header or query parameter given once or several times; undefined when it is not text. */
export const firstString = (value: unknown): string | undefined => {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : undefined;
};
