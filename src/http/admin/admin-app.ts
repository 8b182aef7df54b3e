import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import type { Config } from '../../config/config.js';
import { noopMetrics, type Metrics } from '../../metrics/interface.js';
import type { Database } from '../../domain/records.js';
import { loggerOptions } from '../app.js';
import { registerDrain } from '../graceful-shutdown.js';
import { registerMetricsRoute } from '../operations/metrics-endpoint.js';
import { registerRequestIdHeader, REQUEST_ID_LOG_LABEL, requestIdGenerator } from '../operations/request-id.js';
import { registerRequestMetrics } from '../operations/request-metrics.js';
import { registerRequestLog } from '../plugins/request-log.js';
import { registerSecurityHeaders } from '../plugins/security-headers.js';
import { adminExposureWarnings, registerAdminAuth, type AdminTokenCheck } from './admin-auth.js';
import { adminFrameworkErrorAnswer, registerAdminErrors } from './admin-errors.js';
import { registerKeyRoutes } from './routes/keys.js';
import { registerPriceListRoutes } from './routes/price-lists.js';
import { registerProfileRoutes } from './routes/profiles.js';
import { registerStoreRoutes } from './routes/stores.js';
import { registerVersionRoutes } from './routes/versions.js';
import { registerWebhookRoutes } from './routes/webhooks.js';

export interface AdminAppDependencies {
  config: Readonly<Config>;
  db: Database;
  /** A pino destination for tests that read the log. */
  logStream?: NodeJS.WritableStream;
  /** The clock of the wrong-token throttle (a seam for tests). */
  now?: () => number;
  /** The process's metrics, shared with the public app; served at GET /metrics. */
  metrics?: Metrics;
}

/**
 * The internal API (CONTRACT §9) for the cabinet and the repricer: stores, keys, profiles,
 * publishing. A Fastify instance of its own, on ADMIN_PORT (loopback by default), so nothing
 * of it reaches the public app's /openapi.json or /docs.
 */
export async function buildAdminApp(deps: AdminAppDependencies): Promise<FastifyInstance> {
  const { config, db } = deps;
  if (config.adminToken === null) throw new Error('the admin API needs ADMIN_TOKEN');
  let tokenCheck: AdminTokenCheck | null = null;
  const app = Fastify({
    // The public side's rule: route patterns, never headers (the token) or addresses.
    logger: loggerOptions(config, deps.logStream),
    genReqId: requestIdGenerator(config.trustProxy),
    // The framework's request lines carry the raw address; `onResponse` below logs the route pattern instead.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: REQUEST_ID_LOG_LABEL }),
    // Errors before routing (a bad %-escape, an over-long parameter): token first, then problem+json.
    frameworkErrors: adminFrameworkErrorAnswer(config.basePath, () => tokenCheck),
    bodyLimit: 1024 * 1024,
    // registerDrain answers 503 problem+json while shutting down, as on the public side.
    return503OnClosing: false,
  });
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  // First hook: on SIGTERM a publication being uploaded finishes; new calls get 503 with Retry-After.
  registerRequestIdHeader(app);
  registerDrain(app, config.basePath);

  registerRequestMetrics(app, deps.metrics ?? noopMetrics);
  registerRequestLog(app, 'admin request', deps.metrics ?? noopMetrics);
  registerSecurityHeaders(app);
  registerAdminErrors(app, config.basePath, () => db.ping());
  tokenCheck = registerAdminAuth(app, config.adminToken, { failLimitPerMin: config.adminAuthFailLimitPerMin, now: deps.now });
  for (const warning of adminExposureWarnings(config.adminHost, config.adminToken)) app.log.warn(warning);

  registerStoreRoutes(app, db);
  registerKeyRoutes(app, db);
  registerProfileRoutes(app, db);
  registerVersionRoutes(app, db, config.historyVersions);
  registerWebhookRoutes(app, db, config);
  await registerPriceListRoutes(app, db, config);
  registerMetricsRoute(app, deps.metrics ?? noopMetrics);
  return app;
}
