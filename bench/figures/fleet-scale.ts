/*
 * Issue #18, goal 5 (in part): one instance serving a fleet of stores. A database of STORES
 * stores × ITEMS items each (default 5,000 × 200, SQLite; `--database-url postgres://…` for
 * PostgreSQL) against one of a single store, in alternating rounds:
 *
 * - idle CPU: the server's CPU over IDLE_SECONDS with no request, as a share of a core, beside
 *   the one-store server's in the same rounds (the goal: no growth with the number of stores);
 * - 304 revalidations across every store's key (wrk, a Lua script cycling through the keys with
 *   their ETags, 32 connections) ÷ the 304s of one key on the same server; p50/p99 beside them.
 *
 * Not measured here (still open in the issue): the publish storm (time until every store's hot
 * variants are cached, fetchers' p99 meanwhile). The paper extrapolation to 100k stores from
 * these figures is in bench/RESULTS.md.
 *
 *   node --import tsx bench/figures/fleet-scale.ts [--rounds 5] [--stores 5000] [--items 200] [--quick] [--database-url postgres://…]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../../src/store/factory.js';
import { benchStore } from '../bench-data.js';
import { download } from '../http-client.js';
import { alternatingRounds, emitResult, median } from '../lib/bench-result.js';
import { cpuSeconds, startServer, type ServerProcess } from '../server-process.js';
import { wrk, type WrkResult } from '../wrk.js';
import { createEmptyDatabase } from '../../test/multi-instance/processes.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    stores: { type: 'string' },
    items: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '8' },
    quick: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
  },
});
const ROUNDS = Math.max(5, Number(args.rounds));
const STORES = Number(args.stores ?? (args.quick ? 300 : 5_000));
const ITEMS = Number(args.items);
const SECONDS = Number(args.seconds);
const IDLE_SECONDS = args.quick ? 2 : 5;
const ROOT = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'pe-bench-fleet-scale-'));
const pgUrl = args['database-url'];
const dialect = pgUrl ? 'PostgreSQL' : 'SQLite';

const dropAfter: Array<() => Promise<void>> = [];

/** A fresh database: a SQLite file here, or a new PostgreSQL database beside --database-url's. */
async function freshDatabaseUrl(name: string): Promise<string> {
  if (!pgUrl) return `sqlite:${join(dir, `${name}.db`)}`;
  const created = await createEmptyDatabase(pgUrl);
  dropAfter.push(created.drop);
  return created.url;
}

async function fill(url: string, stores: number): Promise<string[]> {
  const db = await openDatabase(url);
  await db.migrate();
  const keys: string[] = [];
  const started = performance.now();
  for (let i = 0; i < stores; i++) keys.push(await benchStore(db, `fleet-${i}`, ITEMS));
  await db.close();
  console.log(`${dialect}: ${stores} stores × ${ITEMS} items published in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return keys;
}

/** Every key's cached variant (the legacy CSV) and its ETag, as a fetcher would hold them: "path TAB etag" lines. */
async function revalidationLines(s: ServerProcess, keys: readonly string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const key of keys) {
    const path = `/api/export/latest?key=${key}`;
    const first = await download(`${s.base}${path}`);
    if (first.status !== 200) throw new Error(`first download answered ${first.status}`);
    lines.push(`${path}\t${first.headers.etag}`);
  }
  return lines;
}

function linesFile(name: string, lines: readonly string[]): string {
  const file = join(dir, `${name}.tsv`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const CYCLE_SCRIPT = join(dir, 'cycle.lua');
writeFileSync(
  CYCLE_SCRIPT,
  `-- Cycles through the paths of a file (path TAB etag per line), each thread from its own start.
local requests = {}
local at = 0
function init(args)
  for line in io.lines(args[1]) do
    local path, etag = line:match("([^\\t]+)\\t(.+)")
    requests[#requests + 1] = wrk.format("GET", path, { ["If-None-Match"] = etag })
  end
  at = math.random(#requests)
end
function request()
  at = at % #requests + 1
  return requests[at]
end
`,
);

const cycle = (base: string, file: string): Promise<WrkResult> => wrk(base, { connections: 32, seconds: SECONDS, script: CYCLE_SCRIPT, scriptArgs: [file] });

async function idleCpuSeconds(s: ServerProcess): Promise<number> {
  const before = cpuSeconds(s.pid);
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  return cpuSeconds(s.pid) - before;
}

/** The tree's TypeScript through tsx, as bench/ledger-304.ts runs it (never a build that may be stale). */
const command = ['--import', 'tsx', join(ROOT, 'src/cli/index.ts')];
let servedDirs = 0;
const start = (databaseUrl: string) => startServer({ command, databaseUrl, cwd: ROOT, env: { CACHE_DIR: join(dir, `cache-${servedDirs++}`) } });

const servers: ServerProcess[] = [];
try {
  const fleetUrl = await freshDatabaseUrl('fleet');
  const fleetKeys = await fill(fleetUrl, STORES);
  const oneUrl = await freshDatabaseUrl('one');
  const oneKeys = await fill(oneUrl, 1);
  const fleet = await start(fleetUrl);
  servers.push(fleet);
  const one = await start(oneUrl);
  servers.push(one);
  // Settle: both have started their timers and answered once.
  await download(`${one.base}/api/me`, { 'x-api-key': oneKeys[0] });
  await download(`${fleet.base}/api/me`, { 'x-api-key': fleetKeys[0] });

  const idle = await alternatingRounds(ROUNDS, () => idleCpuSeconds(fleet), () => idleCpuSeconds(one));
  const percent = (cpu: number) => (100 * cpu) / IDLE_SECONDS;
  const fleetIdle = idle.ours.map(percent);
  const oneIdle = idle.reference.map(percent);
  // A value, not a ratio: an idle server's CPU is often 0 ticks (10 ms) in a window.
  emitResult({
    figure: `idle CPU of one instance with ${STORES.toLocaleString('en-US')} stores, % of a core (${dialect}, ${IDLE_SECONDS} s windows with no request)`,
    unit: '% of a core',
    higherIsBetter: false,
    ours: fleetIdle,
    reference: [],
    referenceName: 'the same server on a database of one store',
    goal: 'no growth with the number of stores: ≤ 1 % of a core',
    met: median(fleetIdle) <= 1,
    notes: `one store, same rounds: median ${median(oneIdle).toFixed(2)} % (${Math.min(...oneIdle).toFixed(2)}–${Math.max(...oneIdle).toFixed(2)}); CPU time in ticks of 10 ms; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  });

  const lines = await revalidationLines(fleet, fleetKeys);
  const fleetFile = linesFile('every-key', lines);
  const oneFile = linesFile('one-key', lines.slice(0, 1));
  const across: WrkResult[] = [];
  const single: WrkResult[] = [];
  const rates = await alternatingRounds(
    ROUNDS,
    async () => {
      const run = await cycle(fleet.base, fleetFile);
      across.push(run);
      return run.requestsPerSecond;
    },
    async () => {
      const run = await cycle(fleet.base, oneFile);
      single.push(run);
      return run.requestsPerSecond;
    },
  );
  const errors = [...across, ...single].flatMap((run) => run.errors);
  const ratio = median(rates.ours.map((v, i) => v / rates.reference[i]));
  emitResult({
    figure: `304 revalidations/s across all ${STORES.toLocaleString('en-US')} stores' keys ÷ one key's, one instance (${dialect}, 32 connections)`,
    unit: 'req/s',
    higherIsBetter: true,
    ours: rates.ours,
    reference: rates.reference,
    referenceName: 'the same server revalidating one key',
    goal: '≥ 0.8× (a fleet of keys costs about what one key does)',
    met: ratio >= 0.8 && errors.length === 0,
    notes: `p50 across keys ${median(across.map((r) => r.p50Ms)).toFixed(2)} ms (one key ${median(single.map((r) => r.p50Ms)).toFixed(2)} ms), p99 ${median(across.map((r) => r.p99Ms)).toFixed(2)} ms (one key ${median(single.map((r) => r.p99Ms)).toFixed(2)} ms); answers other than 304 or socket errors: ${errors.length === 0 ? 'none' : errors.join(', ')}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  });
} finally {
  for (const s of servers) await s.stop();
  for (const drop of dropAfter) await drop();
  rmSync(dir, { recursive: true, force: true });
}
