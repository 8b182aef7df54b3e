import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import pino from 'pino';
import type { Config } from '../config/config.js';
import type { ExportService } from '../domain/exports.js';
import { createDemandService, type DemandService } from '../domain/variant-demand.js';
import type { PublicationWarmer } from '../render-cache/publication-warmer.js';
import { noopMetrics, type Metrics } from '../metrics/interface.js';
import type { Database } from '../domain/records.js';
import type { Clock, RateCounter } from '../rate-limit/interface.js';
import { MemoryCounter } from '../rate-limit/memory-counter.js';
import { gatheredLines } from './log-destination.js';
import { renderCacheOf } from './export-cache.js';
import { registerExportWarming } from './export-warming.js';
import { registerDrain } from './graceful-shutdown.js';
import { publicFrameworkError, registerProblemHandler } from './plugins/error-handling.js';
import { answerClientError, problemBody } from './problem.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerRequestLog } from './plugins/request-log.js';
import { registerSecurityHeaders } from './plugins/security-headers.js';
import { registerKeyClock } from './key-access.js';
import { acceptEveryMethod } from './public-route.js';
import { RequestGate } from './request-gate.js';
import { registerHealthRoutes } from './operations/health.js';
import { registerRequestIdHeader, REQUEST_ID_LOG_LABEL, requestIdGenerator } from './operations/request-id.js';
import { registerRequestMetrics } from './operations/request-metrics.js';
import { recordDeliveries } from './deliveries.js';
import { registerChangesRoute } from './routes/changes.js';
import { registerExportRoutes } from './routes/exports.js';
import { registerBuilderRoute } from './routes/builder.js';
import { registerMeRoute } from './routes/me.js';
import { registerSummaryRoute } from './routes/summary.js';
import { registerDeliveriesRoute } from './routes/deliveries.js';
import { DeliveryService } from '../domain/deliveries.js';
import { DeliveryLedger } from '../domain/ledger.js';
import { registerFeedCheckRoute } from './routes/feed-check.js';

/**
 * The absolute base of /api/me's address templates. The request's Host is the client's to
 * choose (a link shared from a phishing host would look like ours), so it is used only when
 * it is listed in ALLOWED_HOSTS, or anywhere outside production when no list is set; otherwise
 * the templates are relative to the service root.
 */
export function publicBaseOf(config: Readonly<Config>): (host: string | undefined, protocol: string) => string {
  return (host, protocol) => {
    if (config.publicUrl !== null) return config.publicUrl;
    const name = host?.toLowerCase();
    const trusted = name !== undefined && (config.allowedHosts === null ? !config.production : config.allowedHosts.includes(name));
    return trusted ? `${protocol}://${name}${config.basePath}` : config.basePath;
  };
}

export interface AppDependencies {
  config: Readonly<Config>;
  db: Database;
  /** The export use case, composed with the format writers (src/composition.ts). */
  exports: ExportService;
  /** Shared counters (Redis) when several instances run; in-memory otherwise. */
  counter?: RateCounter;
  /** A pino destination for tests that read the log. */
  logStream?: NodeJS.WritableStream;
  /** The process's metrics (src/metrics); no-op by default. */
  metrics?: Metrics;
  /**
   * The clock (epoch ms) of the rate limits (the default counters' windows, the gate's outage
   * back-off) and of variant demand (the 7-day window); tests move it by hand.
   */
  now?: Clock;
}

let standardOutput: pino.DestinationStream | undefined;

/**
 * The process's log on standard output, written asynchronously: pino's default writes each line
 * with its own synchronous write(2), which with standard output on a pipe (containers, systemd)
 * cost ~12 % of the 304s a second (bench/RESULTS.md, "304 revalidations"). A line waits up to
 * 50 ms for others (log-destination.ts), and lines that arrive while a write is under way go out
 * together with the next one; whatever is pending is written on exit. One destination for the
 * whole process, so the public and admin apps never interleave.
 */
function standardOutputLog(config: Readonly<Config>): pino.DestinationStream {
  return (standardOutput ??= prettyLog(config) ?? gatheredLines(1));
}

/**
 * At a terminal, outside production (`npm start` on a developer's machine): readable lines
 * through pino-pretty (in pino's worker thread). Anywhere else — a pipe, a container, a log
 * shipper — JSON lines. Null when pino-pretty is not installed (a production install).
 */
function prettyLog(config: Readonly<Config>): pino.DestinationStream | null {
  if (!process.stdout.isTTY || config.production) return null;
  try {
    import.meta.resolve('pino-pretty');
  } catch {
    return null;
  }
  return pino.transport({ target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } });
}

/**
 * Logs name the route pattern, never the raw address: a key may travel in the path or query.
 * The framework's own request logging is off for the same reason; `onResponse` logs instead.
 */
export function loggerOptions(config: Readonly<Config>, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    stream: stream ?? standardOutputLog(config),
    serializers: {
      req: (req: { method?: string; routeOptions?: { url?: string } }) => ({ method: req.method, route: req.routeOptions?.url ?? '(unmatched)' }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
    redact: { paths: ['req.headers', 'req.url', 'req.query', 'req.params', 'headers'], remove: true },
  };
}

const warmers = new WeakMap<FastifyInstance, PublicationWarmer>();
const demands = new WeakMap<FastifyInstance, DemandService>();

/** The app's warmer and demand (tests wait for `idle()` and write demand with `flush()` instead of sleeping). */
export function warmingOf(app: FastifyInstance): { warmer: PublicationWarmer; demand: DemandService } {
  const warmer = warmers.get(app);
  const demand = demands.get(app);
  if (!warmer || !demand) throw new Error('not an app built by buildApp');
  return { warmer, demand };
}

export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config, db } = deps;
  const metrics = deps.metrics ?? noopMetrics;
  const app = Fastify({
    logger: loggerOptions(config, deps.logStream),
    genReqId: requestIdGenerator(config.trustProxy),
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: REQUEST_ID_LOG_LABEL }),
    // A socket with no traffic for IDLE_TIMEOUT_SECONDS is closed: idle connections cannot pile
    // up until file descriptors run out (with MAX_CONNECTIONS below).
    connectionTimeout: config.idleTimeoutSeconds * 1000,
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

  // Connections beyond this are closed as they arrive, leaving descriptors for the rest of the process.
  app.server.maxConnections = config.maxConnections;
  acceptEveryMethod(app);
  registerRequestIdHeader(app);
  // First hook after the id: while draining, new requests get 503 before any other work (graceful-shutdown.ts).
  registerDrain(app, config.basePath);

  registerRequestMetrics(app, metrics);
  registerRequestLog(app, 'request', metrics, recordDeliveries(app));

  registerSecurityHeaders(app);
  registerProblemHandler(app, { basePath: config.basePath, notFoundDetail: 'no such address', ping: () => db.ping(), frameworkError: publicFrameworkError });
  // Keys expire by the same clock the rate limits count by (CONTRACT §15): tests move one clock.
  registerKeyClock(app, deps.now ? () => new Date(deps.now!()) : () => new Date());

  const gate = new RequestGate(deps.counter ?? new MemoryCounter(deps.now), {
    perStorePerMin: config.rateLimitPerMin,
    authFailsPerClientPerMin: config.authFailLimitPerMin,
  }, metrics, deps.now);
  // Opened here, under CACHE_DIR, before the routes ask for it (export-cache.ts keeps one per server).
  const cache = renderCacheOf(app, { root: config.cacheDir ?? undefined, maxBytes: config.cacheMaxBytes });
  metrics.watchRenderCache(() => cache.stats());
  metrics.watchDatabasePool(() => db.poolUse?.());
  registerHealthRoutes(app, db, config.basePath);
  const publicBase = publicBaseOf(config);
  if (config.production && config.publicUrl === null && config.allowedHosts === null) {
    app.log.warn('neither PUBLIC_URL nor ALLOWED_HOSTS is set: /api/me gives its address templates without a host');
  }
  // The ledger's and `behind`'s clock: the same seam as the rate limits' (tests move it).
  const now = deps.now ?? Date.now;
  const clock = () => new Date(now());
  // LEDGER_DAYS=0: no ledger at all (nothing recorded, no consumers).
  const ledger = config.ledgerDays === 0 ? null : new DeliveryLedger(db.deliveries.ledger, {
    retentionDays: config.ledgerDays,
    now: clock,
    onError: (error, stage) => app.log.warn({ stage, err: { type: (error as Error)?.name } }, 'delivery ledger write failed'),
  });
  app.decorate('deliveries', new DeliveryService(db.deliveries, ledger, { ledgerDays: config.ledgerDays, staleAfterMin: config.staleAfterMin, now: clock }, now));
  if (ledger) {
    app.addHook('onReady', async () => ledger.start());
    app.addHook('onClose', async () => ledger.stop());
  }

  await app.register(
    async (scope) => {
      // Public schemas document; parameters are checked by hand after the key (see export-params.ts).
      scope.setValidatorCompiler(() => () => true);
      await registerOpenApi(scope, config);
      registerMeRoute(scope, db, gate, publicBase, deps.exports.formats);
      registerDeliveriesRoute(scope, db, gate);
      registerBuilderRoute(scope, config);
      const demand = createDemandService({ db, exports: deps.exports, now: deps.now, onError: () => scope.log.warn('variant demand: a batch was not written') });
      const delivery = { exports: deps.exports, cache: renderCacheOf(scope), demand, accelRedirectPrefix: config.accelRedirectPrefix };
      registerExportRoutes(scope, db, gate, delivery);
      registerSummaryRoute(scope, db, gate, delivery);
      registerChangesRoute(scope, db, gate, delivery);
      registerFeedCheckRoute(scope, db, gate);
      warmers.set(app, registerExportWarming(scope, delivery, demand, config.warmScope));
      demands.set(app, demand);
    },
    { prefix: config.basePath },
  );
  return app;
}
