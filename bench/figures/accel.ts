/*
 * Issue #18, goal 4: repeat downloads of a large cached CSV (100k items, ~7.7 MB) through nginx
 * in front of the service in the X-Accel-Redirect mode (ACCEL_REDIRECT_PREFIX; the instance checks
 * the key and conditions, nginx sends the file with sendfile) versus the same nginx serving the
 * same bytes as a static file. One nginx process (one worker) serves both, with the configuration
 * docs/running-several-instances.md documents (test/support/nginx-front.ts). wrk, 32 connections,
 * alternating rounds. Goal ≥ 0.9×.
 *
 * Beside each round of nginx alone, the same nginx runs a round in front of a bare node:http
 * server that answers with a real hand-off's headers and checks nothing (bench/bare-handoff.ts):
 * the floor, what any Node process handing off reaches on this host. Its ratio is printed in the
 * notes, so a miss says how much of it is the service's own work and how much the hand-off's.
 *
 * Before the measured rounds, --warm-up rounds (1 by default) of both sides run uncounted: the
 * service's first round of hand-offs runs its request path unoptimized (on 2026-12-06's host
 * ~1.1 ms of CPU a hand-off against 0.33–0.45 ms in the rounds after), and alternation put that
 * cost on ours alone.
 *
 *   node --import tsx bench/figures/accel.ts [--rounds 5] [--warm-up 1] [--quick]
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchStore } from '../bench-data.js';
import { startAddressPrinting } from '../lib/address-printing-child.js';
import { alternatingRounds, emitResult, roundRatios, metInEveryRound, spread } from '../lib/bench-result.js';
import { cpuSeconds, minorFaults, startServer as startProfiled } from '../server-process.js';
import { wrk } from '../wrk.js';
import { openDatabase } from '../../src/store/factory.js';
import { freePort, startServer } from '../../test/multi-instance/processes.js';
import { startNginxFront } from '../../test/support/nginx-front.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const rounds = Number(args[args.indexOf('--rounds') + 1]) || 5;
const warmUpRounds = args.includes('--warm-up') ? Number(args[args.indexOf('--warm-up') + 1]) : 1;
/** The service's LOG_LEVEL: info (the default) writes one line per request. */
const logLevel = args.includes('--log-level') ? args[args.indexOf('--log-level') + 1] : 'info';
const ITEMS = quick ? 30_000 : 100_000;
const SECONDS = quick ? 3 : 8;
const CONNECTIONS = 32;
const PREFIX = '/_cache/';
/** As wrk asks: fetch would ask for gzip and br. */
const IDENTITY = { headers: { 'accept-encoding': 'identity' } };

const ROOT = new URL('../..', import.meta.url).pathname;
/** Headers of the service's answer that belong to its connection, not to the hand-off. */
const HOP_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
const dir = mkdtempSync(join(tmpdir(), 'pe-bench-accel-'));
try {
  const databaseUrl = `sqlite:${join(dir, 'bench.db')}`;
  const db = await openDatabase(databaseUrl);
  await db.migrate();
  const key = await benchStore(db, 'bench-accel', ITEMS);
  await db.close();

  const cacheDir = join(dir, 'cache');
  const staticDir = join(dir, 'static');
  mkdirSync(staticDir);
  const env = { CACHE_DIR: cacheDir, ACCEL_REDIRECT_PREFIX: PREFIX };
  // --cpu-prof-dir DIR: a V8 profile of the service over the whole run (written when it stops; LOG_LEVEL=info).
  const service = args.includes('--cpu-prof-dir')
    ? await startProfiled({ command: ['--import', 'tsx', join(ROOT, 'src/cli/index.ts')], databaseUrl, cwd: ROOT, env, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${args[args.indexOf('--cpu-prof-dir') + 1]}`] })
    : await startServer(await freePort(), {
      DATABASE_URL: databaseUrl, NODE_ENV: 'production', LOG_LEVEL: logLevel, RATE_LIMIT_PER_MIN: '1000000', AUTH_FAIL_LIMIT_PER_MIN: '1000000', ...env,
    });
  const upstream = new URL(service.base).host;
  let floor: Awaited<ReturnType<typeof startFloor>> | undefined;
  const front = await startNginxFront(join(dir, 'nginx'), { upstreams: [upstream], accel: { prefix: PREFIX, cacheDir }, staticDir });
  try {
    const path = `/api/export/latest?key=${key}&format=csv`;
    // The first request renders; once the file is finished the instance hands it off.
    let handOff: Headers;
    for (let i = 0; ; i++) {
      const direct = await fetch(`${service.base}${path}`, IDENTITY);
      await direct.arrayBuffer();
      if (direct.headers.get('x-accel-redirect')) {
        handOff = direct.headers;
        break;
      }
      if (i > 400) throw new Error('the export was never cached');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    floor = await startFloor(handOff, join(dir, 'nginx-floor'), cacheDir);
    const through = await fetch(`${front.base}${path}`, IDENTITY);
    const body = Buffer.from(await through.arrayBuffer());
    if (through.status !== 200 || Number(through.headers.get('content-length')) !== body.length) throw new Error(`not a hand-off: ${through.status}`);
    writeFileSync(join(staticDir, 'prices.csv'), body);
    const reference = await fetch(`${front.base}/static/prices.csv`, IDENTITY);
    if (!Buffer.from(await reference.arrayBuffer()).equals(body)) throw new Error('the static copy differs');
    const floorUrl = `${floor.front.base}${path}`;
    if (!Buffer.from(await (await fetch(floorUrl, IDENTITY)).arrayBuffer()).equals(body)) throw new Error('the floor hands off other bytes');

    const errors: string[] = [];
    // What limits the figure: the service's CPU per handed-off request, taken from the two cores
    // that wrk and nginx's worker otherwise share.
    let serviceCpu = 0;
    let serviceFaults = 0;
    let handedOff = 0;
    const run = async (url: string, side: string) => {
      const cpuBefore = cpuSeconds(service.child.pid!);
      const faultsBefore = minorFaults(service.child.pid!);
      const result = await wrk(url, { connections: CONNECTIONS, seconds: SECONDS });
      if (url.startsWith(front.base) && url.includes('/api/')) {
        serviceCpu += cpuSeconds(service.child.pid!) - cpuBefore;
        serviceFaults += minorFaults(service.child.pid!) - faultsBefore;
        handedOff += result.requestsPerSecond * SECONDS;
      }
      errors.push(...result.errors.map((e) => `${side}: ${e}`));
      console.error(`${side}: ${result.requestsPerSecond.toFixed(1)} req/s, p99 ${result.latencyP99}`);
      return result.requestsPerSecond;
    };
    const warmUp: string[] = [];
    for (let round = 0; round < warmUpRounds; round++) {
      const ours = await run(`${front.base}${path}`, 'warm-up, nginx + service');
      const alone = await run(`${front.base}/static/prices.csv`, 'warm-up, nginx alone');
      const bare = await run(floorUrl, 'warm-up, nginx + bare hand-off');
      warmUp.push(`${ours.toFixed(0)}, ${alone.toFixed(0)} and ${bare.toFixed(0)} req/s`);
    }
    const warmUpNote = warmUp.length ? `; ${warmUp.length} uncounted warm-up round(s) first: ${warmUp.join(', ')} (ours, nginx alone, the floor)` : '';
    serviceCpu = serviceFaults = handedOff = 0;
    const load = loadavg()[0];
    // The floor's round sits beside nginx alone's, before it in even rounds and after it in odd ones.
    const floorRatios: number[] = [];
    const alone = () => run(`${front.base}/static/prices.csv`, 'nginx alone (static file)');
    const bare = () => run(floorUrl, 'nginx + bare hand-off (the floor)');
    const measured = await alternatingRounds(rounds, () => run(`${front.base}${path}`, 'nginx + service (X-Accel-Redirect)'), async (round) => {
      let floorRate = round % 2 === 0 ? await bare() : NaN;
      const aloneRate = await alone();
      if (round % 2 !== 0) floorRate = await bare();
      floorRatios.push(floorRate / aloneRate);
      return aloneRate;
    });
    const floorSpread = spread(floorRatios);
    emitResult({
      figure: `repeat requests/s, ${ITEMS / 1000}k-item CSV (${(body.length / 1e6).toFixed(1)} MB), ${CONNECTIONS} connections, through nginx with ACCEL_REDIRECT_PREFIX`,
      unit: 'req/s',
      higherIsBetter: true,
      ours: measured.ours,
      reference: measured.reference,
      referenceName: 'the same nginx serving the same bytes as a static file (sendfile)',
      goal: '≥ 0.9×',
      met: metInEveryRound(roundRatios({ ...measured, higherIsBetter: true }), 0.9),
      notes: `wrk ${SECONDS} s per round, one nginx worker, one service process (tsx, LOG_LEVEL=${logLevel}), SQLite; the floor (the same nginx configuration, another nginx process, in front of bench/bare-handoff.ts, a bare node:http server answering with this hand-off's headers and checking nothing) ${floorSpread.median.toFixed(3)}× (${floorSpread.min.toFixed(3)}–${floorSpread.max.toFixed(3)}) of nginx alone; the service used ${((serviceCpu / handedOff) * 1000).toFixed(2)} ms of CPU and took ${(serviceFaults / handedOff).toFixed(1)} page faults per hand-off; load average ${load.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end${warmUpNote}${errors.length ? `; errors: ${errors.join('; ')}` : ''}`,
    });
  } finally {
    await floor?.stop();
    await front.stop();
    await service.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** bench/bare-handoff.ts answering with `handOff`'s headers, behind its own nginx configured as the service's front. */
async function startFloor(handOff: Headers, nginxDir: string, cacheDir: string) {
  const headers = Object.fromEntries([...handOff].filter(([name]) => !HOP_HEADERS.has(name)));
  const { child: server, address } = await startAddressPrinting('bench/bare-handoff.ts', [JSON.stringify(headers)]);
  const front = await startNginxFront(nginxDir, { upstreams: [address], accel: { prefix: PREFIX, cacheDir } });
  return {
    front,
    async stop() {
      await front.stop();
      server.kill('SIGTERM');
    },
  };
}
