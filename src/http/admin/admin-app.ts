import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import type { Config } from '../../config/config.js';
import type { Store } from '../../store/types.js';
import { loggerOptions } from '../app.js';
import { registerDrain } from '../graceful-shutdown.js';
import { registerRequestLog } from '../plugins/request-log.js';
import { registerSecurityHeaders } from '../plugins/security-headers.js';
import { registerAdminAuth } from './admin-auth.js';
import { registerAdminErrors } from './admin-errors.js';
import { registerKeyRoutes } from './routes/keys.js';
import { registerPriceListRoutes } from './routes/price-lists.js';
import { registerProfileRoutes } from './routes/profiles.js';
import { registerStoreRoutes } from './routes/stores.js';
import { registerWebhookRoutes } from './routes/webhooks.js';

export interface AdminAppDependencies {
  config: Readonly<Config>;
  store: Store;
  /** A pino destination for tests that read the log. */
  logStream?: NodeJS.WritableStream;
}

/**
 * The internal API (CONTRACT §9) for the cabinet and the repricer: stores, keys, profiles,
 * publishing. A Fastify instance of its own, on ADMIN_PORT (loopback by default), so nothing
 * of it reaches the public app's /openapi.json or /docs.
 */
export async function buildAdminApp(deps: AdminAppDependencies): Promise<FastifyInstance> {
  const { config, store } = deps;
  if (config.adminToken === null) throw new Error('the admin API needs ADMIN_TOKEN');
  const app = Fastify({
    // The public side's rule: route patterns, never headers (the token) or addresses.
    logger: loggerOptions(config, deps.logStream),
    // The framework's request lines carry the raw address; `onResponse` below logs the route pattern instead.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1024 * 1024,
    // registerDrain answers 503 problem+json while shutting down, as on the public side.
    return503OnClosing: false,
  });
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  // First hook: on SIGTERM a publication being uploaded finishes; new calls get 503 with Retry-After.
  registerDrain(app, config.basePath);

  registerRequestLog(app, 'admin request');
  registerSecurityHeaders(app);
  registerAdminErrors(app, config.basePath);
  registerAdminAuth(app, config.adminToken);

  registerStoreRoutes(app, store);
  registerKeyRoutes(app, store);
  registerProfileRoutes(app, store);
  registerWebhookRoutes(app, store, config);
  await registerPriceListRoutes(app, store);
  return app;
}
