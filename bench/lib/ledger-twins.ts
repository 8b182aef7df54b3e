/*
 * Two public apps in one process, on one database, with LEDGER_DAYS as TWIN_LEDGER_DAYS lists
 * them ("30,0": the first with the delivery ledger, the second without; bench/ledger-304.ts
 * swaps them every other round), each on a port of its own (logged as Fastify's "Server
 * listening at" lines, in that order). bench/ledger-304.ts `--twins` measures
 * one against the other: the same process, so the same JIT, heap and placement — the spread
 * between two processes of the same code (±13 % per 304, bench/RESULTS.md) leaves the
 * comparison and only the ledger differs. Stops on SIGTERM.
 */
import type { FastifyInstance } from 'fastify';
import { buildPublicApp } from '../../src/composition.js';
import { loadConfig } from '../../src/config/config.js';
import { noopMetrics } from '../../src/metrics/interface.js';
import { openCounter } from '../../src/rate-limit/factory.js';
import { openDatabase } from '../../src/store/factory.js';

const config = loadConfig();
const db = await openDatabase(config.databaseUrl);
await db.migrate();
const counter = await openCounter(config.redisUrl);
const apps: FastifyInstance[] = [];
// TWIN_LEDGER_DAYS="0,0": both without a ledger (the A/A run, `--aa`).
for (const ledgerDays of (process.env.TWIN_LEDGER_DAYS ?? '30,0').split(',').map(Number)) {
  const app = await buildPublicApp({ config: { ...config, ledgerDays }, db, counter, metrics: noopMetrics });
  await app.listen({ port: 0, host: config.host });
  apps.push(app);
}
process.once('SIGTERM', async () => {
  for (const app of apps) await app.close();
  await counter.close();
  await db.close();
  process.exit(0);
});
