/*
 * Issue #21: what the metrics cost a 304 revalidation, the cheapest (so the most sensitive)
 * answer the service gives. Two servers on one database, the same configuration but METRICS:
 * on (prom-client, scraped on the admin API) and off (the no-op). wrk loads one, then the
 * other, the order alternating each round so a drift in the shared machine's load favours
 * neither; each round gives one ratio on ÷ off, and the figure is their median, with min–max.
 */
import { download } from './http-client.js';
import { startServer, type ServerProcess } from './server-process.js';
import { wrk } from './wrk.js';

export interface MetricsOverhead {
  ratios: number[];
  median: number;
  min: number;
  max: number;
  errors: string[];
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
  const servers = { on: await start({}), off: await start({ METRICS: 'off' }) };
  try {
    const targets = { on: await options.cachedUrl(servers.on), off: await options.cachedUrl(servers.off) };
    for (const side of ['on', 'off'] as const) {
      const check = await download(targets[side].url, { 'if-none-match': targets[side].etag });
      if (check.status !== 304) throw new Error(`metrics ${side}: If-None-Match answered ${check.status}`);
    }
    const ratios: number[] = [];
    const errors: string[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      const rps = { on: 0, off: 0 };
      for (const side of order) {
        const result = await wrk(targets[side].url, { connections: 32, seconds: options.seconds, headers: { 'If-None-Match': targets[side].etag } });
        rps[side] = result.requestsPerSecond;
        errors.push(...result.errors.map((e) => `metrics ${side}: ${e}`));
      }
      ratios.push(rps.on / rps.off);
      options.log(`304 with metrics, round ${round + 1} (${order.join(' then ')}): on ${Math.round(rps.on)}/s, off ${Math.round(rps.off)}/s, ratio ${(rps.on / rps.off).toFixed(3)}`);
    }
    const sorted = [...ratios].sort((a, b) => a - b);
    return { ratios, median: sorted[Math.floor(sorted.length / 2)], min: sorted[0], max: sorted.at(-1)!, errors };
  } finally {
    await servers.on.stop();
    await servers.off.stop();
  }
}
