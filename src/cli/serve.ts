import { loadConfig } from '../config/config.js';
import { demoAddresses, setUpDemo } from '../domain/demo.js';
import { buildPublicApp } from '../composition.js';
import { installGracefulShutdown } from '../http/graceful-shutdown.js';
import { listenForMetrics } from '../http/operations/metrics-endpoint.js';
import { noopMetrics } from '../metrics/interface.js';
import { openDatabase } from '../store/factory.js';
import { openCounter } from '../rate-limit/factory.js';
import { startDeliveryWorker } from '../domain/delivery-worker.js';
import { startMaintenance } from '../domain/maintenance.js';
import { collectStartupGarbage } from './startup-garbage.js';

/** Starts the public API (and the internal one when ADMIN_TOKEN is set); on an empty database outside production, seeds the demo store first. */
export async function runServe(options: { seedDemo: boolean }): Promise<void> {
  const config = loadConfig();
  const db = await openDatabase(config.databaseUrl, { poolSize: config.databasePoolSize });
  await db.migrate();

  let demo: Awaited<ReturnType<typeof setUpDemo>> | null = null;
  if (options.seedDemo && !config.production && (await db.stores.list()).length === 0) demo = await setUpDemo(db);

  const counter = await openCounter(config.redisUrl);
  // Metrics are kept only where someone can scrape them: the admin API or METRICS_PORT.
  const scraped = config.metrics && (config.adminToken !== null || config.metricsPort !== null);
  const metrics = scraped ? new (await import('../metrics/prometheus.js')).PrometheusMetrics() : noopMetrics;
  const app = await buildPublicApp({ config, db, counter, metrics });
  // Before the first request, not during it (startup-garbage.ts).
  collectStartupGarbage();
  await app.listen({ port: config.port, host: config.host });

  let admin = null;
  if (config.adminToken !== null) {
    const { buildAdminApp } = await import('../http/admin/admin-app.js');
    admin = await buildAdminApp({ config, db, metrics });
    await admin.listen({ port: config.adminPort, host: config.adminHost });
  }
  const metricsServer = scraped && config.metricsPort !== null ? await listenForMetrics(metrics, config.metricsPort) : null;

  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const base = config.publicUrl ?? `http://localhost:${port}${config.basePath}`;
  if (demo) {
    // Printed for the newcomer at the terminal, never logged: the key is shown this once. Standard
    // error, because standard output carries the JSON log lines, which a collector keeps.
    process.stderr.write(
      `\nDemo store "${demo.storeId}" created. Demo API key (shown once):\n  ${demo.key}\n\nTry:\n` +
        demoAddresses(base, demo.key, demo.profile.id).map((line) => `  ${line}`).join('\n') +
        `\n\nDocs: ${base}/docs   Export-link builder: ${base}/\n\n`,
    );
  }

  // Webhooks go out from every instance (CONTRACT §13); errors are logged by name only (a driver's message may quote an address).
  const worker = startDeliveryWorker(db, config, (error, stage) => app.log.warn({ stage, err: { type: (error as Error)?.name } }, 'webhook delivery failed'));
  // Drafts of killed publications and versions past their grace go on a timer, not only at a store's next publication.
  const maintenance = startMaintenance(db, (error) => app.log.warn({ err: { type: (error as Error)?.name } }, 'database maintenance failed'));
  installGracefulShutdown({
    servers: admin ? [app, admin] : [app],
    release: [() => worker.stop(), () => maintenance.stop(), async () => void metricsServer?.close(), () => counter.close(), () => db.close()],
  });
}
