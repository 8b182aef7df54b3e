import pino from 'pino';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { Config } from '../config/config.js';
import type { Store } from '../store/types.js';
import type { RateCounter } from '../rate-limit/interface.js';
import { MemoryCounter } from '../rate-limit/memory-counter.js';
import { registerDrain } from './graceful-shutdown.js';
import { registerErrorHandling } from './plugins/error-handling.js';
import { answerClientError, problemBody } from './problem.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerRequestLog } from './plugins/request-log.js';
import { registerSecurityHeaders } from './plugins/security-headers.js';
import { acceptEveryMethod } from './public-route.js';
import { RequestGate } from './request-gate.js';
import { registerExportRoutes } from './routes/exports.js';
import { registerBuilderRoute } from './routes/builder.js';
import { registerMeRoute } from './routes/me.js';
import { registerSummaryRoute } from './routes/summary.js';
import { registerDeliveriesRoute } from './routes/deliveries.js';
import { DeliveryServices } from './deliveries.js';
import { DeliveryLedger, type Clock } from '../domain/ledger.js';

export interface AppDependencies {
  config: Readonly<Config>;
  store: Store;
  /** Shared counters (Redis) when several instances run; in-memory otherwise. */
  counter?: RateCounter;
  /** A pino destination for tests that read the log. */
  logStream?: NodeJS.WritableStream;
  /** The clock of the ledger and of `behind` (tests move it). */
  clock?: Clock;
}

let standardOutput: pino.DestinationStream | undefined;

/**
 * The process's log on standard output, written asynchronously: pino's default writes each line
 * with its own synchronous write(2), which with standard output on a pipe (containers, systemd)
 * cost ~12 % of the 304s a second (bench/RESULTS.md, "304 revalidations"). Lines that arrive
 * while a write is under way go out together with the next one; whatever is pending is written
 * on exit. One destination for the whole process, so the public and admin apps never interleave.
 */
function standardOutputLog(): pino.DestinationStream {
  return (standardOutput ??= pino.destination({ dest: 1, sync: false }));
}

/**
 * Logs name the route pattern, never the raw address: a key may travel in the path or query.
 * The framework's own request logging is off for the same reason; `onResponse` logs instead.
 */
export function loggerOptions(config: Readonly<Config>, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    stream: stream ?? standardOutputLog(),
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
    logController: new LogController({ disableRequestLogging: true }),
    // Only the configured proxies may name the client (X-Forwarded-For is the client's to forge).
    // A hop count is documented Fastify behaviour; its types only omit the number form.
    trustProxy: config.trustProxy as boolean | string[],
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
    // Requests the HTTP parser refuses never reach a route: answer them ourselves, and never
    // log the error (it carries the raw request bytes, key included).
    clientErrorHandler: (error, socket) => answerClientError(error as NodeJS.ErrnoException, socket, config.basePath),
    bodyLimit: 1024 * 1024,
    // Shutdown answers 503 problem+json itself while draining (graceful-shutdown.ts); Fastify's own 503 has its own body.
    return503OnClosing: false,
  });

  acceptEveryMethod(app);
  // First hook: while draining, new requests get 503 before any other work (graceful-shutdown.ts).
  registerDrain(app, config.basePath);

  registerRequestLog(app);

  registerSecurityHeaders(app);
  registerErrorHandling(app, store, config.basePath);

  const gate = new RequestGate(deps.counter ?? new MemoryCounter(), {
    perStorePerMin: config.rateLimitPerMin,
    authFailsPerClientPerMin: config.authFailLimitPerMin,
  });
  const clock = deps.clock ?? (() => new Date());
  // LEDGER_DAYS=0: no ledger at all (nothing recorded, no consumers).
  const ledger = config.ledgerDays === 0 ? null : new DeliveryLedger(store.deliveries.ledger, {
    retentionDays: config.ledgerDays,
    now: clock,
    onError: (error, stage) => app.log.warn({ stage, err: { type: (error as Error)?.name } }, 'delivery ledger write failed'),
  });
  app.decorate('deliveries', new DeliveryServices(ledger, store.deliveries, { ledgerDays: config.ledgerDays, staleAfterMin: config.staleAfterMin, now: clock }));
  if (ledger) {
    app.addHook('onReady', async () => ledger.start());
    app.addHook('onClose', async () => ledger.stop());
  }
  const publicBase = (host: string | undefined, protocol: string) => config.publicUrl ?? `${protocol}://${host ?? 'localhost'}${config.basePath}`;

  await app.register(
    async (scope) => {
      // Public schemas document; parameters are checked by hand after the key (see export-params.ts).
      scope.setValidatorCompiler(() => () => true);
      await registerOpenApi(scope, config);
      registerMeRoute(scope, store, gate, publicBase);
      registerDeliveriesRoute(scope, store, gate);
      registerBuilderRoute(scope, config);
      registerExportRoutes(scope, store, gate);
      registerSummaryRoute(scope, store, gate);
    },
    { prefix: config.basePath },
  );
  return app;
}
