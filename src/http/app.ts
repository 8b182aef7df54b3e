import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { Config } from '../config/config.js';
import type { Store } from '../store/types.js';
import type { RateCounter } from '../rate-limit/interface.js';
import { MemoryCounter } from '../rate-limit/memory-counter.js';
import { registerErrorHandling } from './plugins/error-handling.js';
import { problemBody } from './problem.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerSecurityHeaders } from './plugins/security-headers.js';
import { RequestGate } from './request-gate.js';
import { registerExportRoutes } from './routes/exports.js';
import { registerMeRoute } from './routes/me.js';
// import { registerSummaryRoute } from './routes/summary.js';

export interface AppDependencies {
  config: Readonly<Config>;
  store: Store;
  /** Shared counters (Redis) when several instances run; in-memory otherwise. */
  counter?: RateCounter;
  /** A pino destination for tests that read the log. */
  logStream?: NodeJS.WritableStream;
}

/**
 * Logs name the route pattern, never the raw address: a key may travel in the path or query.
 * The framework's own request logging is off for the same reason; `onResponse` logs instead.
 */
function loggerOptions(config: Readonly<Config>, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    ...(stream ? { stream } : {}),
    serializers: {
      req: (req: { method?: string; routeOptions?: { url?: string } }) => ({ method: req.method, route: req.routeOptions?.url ?? '(unmatched)' }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
    redact: { paths: ['req.headers', 'req.url', 'req.query', 'req.params', 'headers'], remove: true },
  };
}

export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, store } = deps;
  const app = Fastify({
    logger: loggerOptions(config, deps.logStream),
    disableRequestLogging: true,
    trustProxy: true,
    // The predecessor ran on a case-insensitive server; old links are spelled every way (CONTRACT §3).
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 1024 },
    // Framework errors before routing (a bad %-escape) must not echo the address.
    frameworkErrors: (_error, _request, reply) => {
      (reply as unknown as FastifyReply)
        .code(400)
        .header('Content-Type', 'application/problem+json')
        .header('Referrer-Policy', 'no-referrer')
        .header('X-Content-Type-Options', 'nosniff')
        .send(Buffer.from(JSON.stringify(problemBody('invalid_parameter', 'the address is malformed', config.basePath))));
    },
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
  });

  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, route: request.routeOptions.url ?? '(unmatched)', status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });

  registerSecurityHeaders(app);
  registerErrorHandling(app, store, config.basePath);

  const gate = new RequestGate(deps.counter ?? new MemoryCounter(), {
    perStorePerMin: config.rateLimitPerMin,
    authFailsPerClientPerMin: config.authFailLimitPerMin,
  });
  const publicBase = (host: string | undefined, protocol: string) => config.publicUrl ?? `${protocol}://${host ?? 'localhost'}${config.basePath}`;

  await app.register(
    async (scope) => {
      // Public schemas document; parameters are checked by hand after the key (see export-params.ts).
      scope.setValidatorCompiler(() => () => true);
      await registerOpenApi(scope, config);
      registerMeRoute(scope, store, gate, publicBase);
      registerExportRoutes(scope, store, gate);
      // registerSummaryRoute(scope, store, gate);
    },
    { prefix: config.basePath },
  );
  return app;
}
