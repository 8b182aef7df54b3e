/*
 * Issue #21: what the metrics cost a 304 revalidation, the cheapest (so the most sensitive)
 * answer the service gives. Two servers on one database, the same configuration but METRICS:
 * on (prom-client, scraped on the admin API) and off (the no-op). wrk loads one, then the
 * other, the order alternating each round so a drift in the shared machine's load favours
 * neither; each round gives one ratio on ÷ off, and the figure is their median, with min–max.
 * On a shared machine throughput swings with the neighbours' load, so each round also gives
 * the ratio of requests per CPU-second of the server process (what the metrics themselves
 * cost, whatever else runs).
 *
 * Each round starts its own pair of servers: two processes of the same code differ by more than
 * the metrics cost (one pair for a whole run gave 0.905× in one run and 1.087× in the next,
 * bench/RESULTS.md "2026-11-28, early morning"), so one pair for every round measured the pair.
 */
import { download } from './http-client.js';
import { cpuSeconds, startServer, type ServerProcess } from './server-process.js';
import { wrk } from './wrk.js';

export interface RatioSummary {
  ratios: number[];
  median: number;
  min: number;
  max: number;
}

export interface MetricsOverhead {
  /** Requests/s, on ÷ off. */
  throughput: RatioSummary;
  /** Requests per CPU-second of the server, on ÷ off. */
  perCpu: RatioSummary;
  errors: string[];
}

function summary(ratios: number[]): RatioSummary {
  const sorted = [...ratios].sort((a, b) => a - b);
  return { ratios, median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted.at(-1)! };
}

export interface MetricsOverheadOptions {
  command: string[];
  databaseUrl: string;
  cwd: string;
  /** A cached small export's address, without the host, and its ETag (run.ts's cachedCsvUrl). */
  cachedUrl(s: ServerProcess): Promise<{ url: string; etag: string }>;
  rounds: number;
  seconds: number;
  log(line: string): void;
}

export async function measureMetricsOverhead(options: MetricsOverheadOptions): Promise<MetricsOverhead> {
  const env = { ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef', ADMIN_PORT: '0' };
  const start = (extra: Record<string, string>) => startServer({ command: options.command, databaseUrl: options.databaseUrl, cwd: options.cwd, env: { ...env, ...extra } });
  const throughput: number[] = [];
  const perCpu: number[] = [];
  const errors: string[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const servers = { on: await start({}), off: await start({ METRICS: 'off' }) };
    try {
      const targets = { on: await options.cachedUrl(servers.on), off: await options.cachedUrl(servers.off) };
      for (const side of ['on', 'off'] as const) {
        const check = await download(targets[side].url, { 'if-none-match': targets[side].etag });
        if (check.status !== 304) throw new Error(`metrics ${side}: If-None-Match answered ${check.status}`);
      }
      const order = round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      const rps = { on: 0, off: 0 };
      const rpc = { on: 0, off: 0 };
      for (const side of order) {
        const cpuBefore = cpuSeconds(servers[side].pid);
        const result = await wrk(targets[side].url, { connections: 32, seconds: options.seconds, headers: { 'If-None-Match': targets[side].etag } });
        const cpu = cpuSeconds(servers[side].pid) - cpuBefore;
        rps[side] = result.requestsPerSecond;
        rpc[side] = (result.requestsPerSecond * options.seconds) / cpu;
        errors.push(...result.errors.map((e) => `metrics ${side}: ${e}`));
      }
      throughput.push(rps.on / rps.off);
      perCpu.push(rpc.on / rpc.off);
      options.log(
        `304 with metrics, round ${round + 1} (a fresh pair, ${order.join(' then ')}): on ${Math.round(rps.on)}/s, off ${Math.round(rps.off)}/s (${(rps.on / rps.off).toFixed(3)}×); ` +
          `per CPU-second on ${Math.round(rpc.on)}, off ${Math.round(rpc.off)} (${(rpc.on / rpc.off).toFixed(3)}×)`,
      );
    } finally {
      await servers.on.stop();
      await servers.off.stop();
    }
  }
  return { throughput: summary(throughput), perCpu: summary(perCpu), errors };
}
