/*
 * `npm run bench`: the figures of the issue "Speed and memory", each against a reference
 * measured in the same run, written with the machine's description to bench/RESULTS.md.
 *
 *   npm run bench [-- --quick] [-- --only first-csv,repeat,304,metrics-304,…] [-- --skip-others] [-- --seconds 10] [-- --profile-all]
 *
 * The service runs as its own process (the build in .cache/bench-dist, else the TypeScript
 * through tsx) on a SQLite database filled here; loads come from wrk. A figure that misses its
 * goal is measured again under `node --cpu-prof`, and the profile's top frames go into
 * RESULTS.md. --quick shrinks the lists (for trying the script, not for figures).
 *
 * Then every script in bench/figures/ (--only takes their names too: --only warm-hot-variants,accel)
 * runs as its own process and reports through bench/lib/bench-result.ts: each figure the median of
 * at least five alternating rounds with min–max.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/store/factory.js';
import { benchStore } from './bench-data.js';
import { framesTable, monotonicMicros, threadProfiles, topFrames, type Window } from './cpu-profile.js';
import { download } from './http-client.js';
import { startNginx } from './nginx.js';
import type { ReferenceRun } from './references.js';
import { measureMetricsOverhead } from './metrics-overhead.js';
import { cpuSeconds, rssMiB, sampleRss, startServer, type ServerProcess } from './server-process.js';
import { renderResults, type Figure } from './results.js';
import { wrk } from './wrk.js';
import { RESULT_PREFIX, roundRatios, spread, type BenchResult, metInEveryRound } from './lib/bench-result.js';
import { builtServiceCommand } from './lib/built-service.js';
import { startAddressPrinting } from './lib/address-printing-child.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'skip-others': { type: 'boolean', default: false },
    'no-profile': { type: 'boolean', default: false },
    // Profile every figure, met or not (to see what the next limit is).
    'profile-all': { type: 'boolean', default: false },
    seconds: { type: 'string', default: '10' },
  },
});
const ROOT = new URL('..', import.meta.url).pathname;
const QUICK = args.quick;
const SIZES = QUICK ? { small: 10_000, medium: 20_000, large: 100_000 } : { small: 10_000, medium: 100_000, large: 1_000_000 };
const WRK_SECONDS = Number(args.seconds);
const ONLY = args.only ? new Set(args.only.split(',')) : null;
const wanted = (part: string) => ONLY === null || ONLY.has(part);
const FORMATS = ['csv', 'tsv', 'xlsx', 'json', 'xml', 'yml'] as const;

const figures: Figure[] = [];
const notes: string[] = [];
const sections: string[] = [];
const log = (line: string) => console.log(line);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

const dir = mkdtempSync(join(tmpdir(), 'price-export-bench-'));
const dbUrl = `sqlite:${join(dir, 'bench.db')}`;

// ---------------------------------------------------------------------------------------------
// The service: built once into .cache/bench-dist (bench/lib/built-service.ts).

function serverCommand(): string[] {
  const { command: built, built: ok } = builtServiceCommand(ROOT, log);
  if (!ok) notes.push('The build failed; the service ran through tsx (the same code, transpiled on load).');
  return built;
}

let command: string[] = [];
const server = (nodeFlags: string[] = []) => startServer({ command, databaseUrl: dbUrl, cwd: ROOT, nodeFlags });

async function withServer<T>(nodeFlags: string[], work: (s: ServerProcess) => Promise<T>): Promise<T> {
  const s = await server(nodeFlags);
  try {
    return await work(s);
  } finally {
    await s.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Data and references.

const keys: Record<string, string> = {};

async function prepare(): Promise<void> {
  const db = await openDatabase(dbUrl);
  await db.migrate();
  for (const [name, count] of Object.entries(SIZES)) {
    const started = performance.now();
    keys[name] = await benchStore(db, `bench-${name}`, count);
    log(`published ${fmt(count)} items for bench-${name} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  await db.close();
}

/** One run of a reference writer over the same rows, in a process of its own. */
function reference(name: 'csv-stringify' | 'exceljs', count: number): ReferenceRun {
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/references.ts'), name, String(count)], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) throw new Error(`reference ${name} failed`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as ReferenceRun;
}

const exportUrl = (s: ServerProcess, size: keyof typeof SIZES, query = '') => `${s.base}/api/export/latest?key=${keys[size]}${query ? `&${query}` : ''}`;

// ---------------------------------------------------------------------------------------------
// Figures.

interface FirstRun {
  seconds: number;
  cpuSeconds: number;
  firstByteSeconds: number;
  bytes: number;
  peakRssMiB: number;
  idleRssMiB: number;
  window: Window;
}

/** One uncached download on a fresh server (a fresh process has an empty cache). */
async function firstDownload(size: keyof typeof SIZES, query: string, nodeFlags: string[] = []): Promise<FirstRun> {
  return withServer(nodeFlags, async (s) => {
    // Settle: the first request compiles the routes' code paths; an idle server is one that has answered once.
    await download(`${s.base}/api/me`, { 'x-api-key': keys.small });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const idleRssMiB = rssMiB(s.pid);
    const cpuBefore = cpuSeconds(s.pid);
    const stopSampling = sampleRss(s.pid);
    const from = monotonicMicros();
    const run = await download(exportUrl(s, size, query));
    const window = { from, to: monotonicMicros() };
    const peakRssMiB = stopSampling();
    if (run.status !== 200) throw new Error(`${query || 'legacy CSV'}: status ${run.status}`);
    return { seconds: run.seconds, cpuSeconds: cpuSeconds(s.pid) - cpuBefore, firstByteSeconds: run.firstByteSeconds, bytes: run.bytes, peakRssMiB, idleRssMiB, window };
  });
}

/** Rounds of each figure: ours and the reference alternate, the first of a pair swapping each round. */
const ROUNDS = 5;

async function firstExport(label: string, size: keyof typeof SIZES, query: string, ref: 'csv-stringify' | 'exceljs', goal: number): Promise<void> {
  const count = SIZES[size];
  const runs: { ours: FirstRun; theirs: ReferenceRun }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      const ours = await firstDownload(size, query);
      runs.push({ ours, theirs: reference(ref, count) });
    } else {
      const theirs = reference(ref, count);
      runs.push({ ours: await firstDownload(size, query), theirs });
    }
  }
  const ratios = spread(runs.map((r) => r.theirs.seconds / r.ours.seconds));
  const cpuRatios = spread(runs.map((r) => r.theirs.cpuSeconds / r.ours.cpuSeconds));
  const ours = spread(runs.map((r) => count / r.ours.seconds));
  const theirs = spread(runs.map((r) => count / r.theirs.seconds));
  const typical = [...runs].sort((a, b) => a.ours.seconds - b.ours.seconds)[Math.floor(runs.length / 2)].ours;
  log(`${label}: ${fmt(ours.median)} items/s, ${ref} ${fmt(theirs.median)} items/s → median ${ratios.median.toFixed(2)}× (${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)})`);
  figures.push({
    figure: `${label}, items/s`,
    measured: `median ${fmt(ours.median)} (${fmt(ours.min)}–${fmt(ours.max)}); ratio per round ${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)}, CPU-s ${cpuRatios.min.toFixed(2)}–${cpuRatios.max.toFixed(2)}, ${ROUNDS} alternating rounds (median run: ${(typical.bytes / 2 ** 20).toFixed(1)} MiB, first byte after ${(typical.firstByteSeconds * 1000).toFixed(0)} ms, RSS +${(typical.peakRssMiB - typical.idleRssMiB).toFixed(0)} MiB)`,
    reference: `${ref}: median ${fmt(theirs.median)} (${fmt(theirs.min)}–${fmt(theirs.max)})`,
    ratio: ratios.median,
    cpuRatio: cpuRatios.median,
    goal: `≥ ${goal}×`,
    met: metInEveryRound(ratios, goal),
    profile: async (nodeFlags) => (await firstDownload(size, query, nodeFlags)).window,
  });
}

/**
 * Peak RSS of a first (uncached) export of the large list, per format, in ROUNDS rounds (each a
 * fresh server; the formats' order rotates each round). The figure is the worst format's median
 * growth with its min–max, met only when every round of every format stays under the goal.
 */
async function peakRss(): Promise<void> {
  const runs = new Map<string, FirstRun[]>(FORMATS.map((format) => [format, []]));
  const failures: string[] = [];
  const growthOf = (run: FirstRun) => run.peakRssMiB - run.idleRssMiB;
  for (let round = 0; round < ROUNDS; round++) {
    const order = FORMATS.map((_, i) => FORMATS[(i + round) % FORMATS.length]);
    for (const format of order) {
      try {
        const run = await firstDownload('large', `format=${format}`);
        runs.get(format)!.push(run);
        log(`peak RSS ${format}, round ${round + 1}: idle ${run.idleRssMiB.toFixed(0)} MiB, peak ${run.peakRssMiB.toFixed(0)} MiB (+${growthOf(run).toFixed(0)})`);
      } catch (error) {
        failures.push(`${format}: ${(error as Error).message}`);
      }
    }
  }
  const rows: string[] = [];
  let worst: { format: string; growth: ReturnType<typeof spread> } | null = null;
  for (const [format, served] of runs) {
    if (served.length === 0) {
      rows.push(`| ${format} | — | — | not served |`);
      continue;
    }
    const g = spread(served.map(growthOf));
    const v = spread(served.map((run) => SIZES.large / run.seconds));
    if (!worst || g.median > worst.growth.median) worst = { format, growth: g };
    rows.push(`| ${format} | +${g.median.toFixed(0)} (+${g.min.toFixed(0)} – +${g.max.toFixed(0)}) | ${fmt(v.median)} (${fmt(v.min)}–${fmt(v.max)}) | ${(served[0].bytes / 2 ** 20).toFixed(1)} MiB |`);
  }
  const goalMiB = (200 * 1e6) / 2 ** 20;
  const highest = Math.max(...[...runs.values()].flat().map(growthOf));
  sections.push(
    `### Peak RSS serving a ${fmt(SIZES.large)}-item export (first, uncached request on a fresh server; sampled every 20 ms; ${ROUNDS} rounds)\n\n| format | growth over idle, MiB: median (min–max) | items/s: median (min–max) | size |\n|---|---|---|---|\n${rows.join('\n')}${failures.length ? `\n\nNot served: ${failures.join('; ')}` : ''}`,
  );
  figures.push({
    figure: `peak RSS serving a ${fmt(SIZES.large)}-item export, worst format (${worst?.format ?? '—'}), ${ROUNDS} rounds`,
    measured: worst ? `median +${worst.growth.median.toFixed(0)} MiB (+${worst.growth.min.toFixed(0)} – +${worst.growth.max.toFixed(0)}); highest round of any format +${highest.toFixed(0)} MiB` : 'not served',
    reference: 'the idle server',
    ratio: null,
    goal: '< +200 MB in every round',
    met: worst !== null && failures.length === 0 && highest < goalMiB,
  });
}

/**
 * wrk against ours and the reference in ROUNDS alternating rounds (the first of a pair swapping
 * each round); the figure is the median of the per-round ratios, with their min–max.
 */
async function versus(label: string, ours: string, theirs: string, headers: Record<string, string>, connections: number) {
  const rates = { ours: [] as number[], theirs: [] as number[] };
  const errors: string[] = [];
  const measure = async (side: 'ours' | 'theirs') => {
    const result = await wrk(side === 'ours' ? ours : theirs, { connections, seconds: WRK_SECONDS, headers: side === 'theirs' && label === '304' ? {} : headers });
    errors.push(...result.errors.map((e) => `${side === 'ours' ? 'ours' : 'reference'}: ${e}`));
    rates[side].push(result.requestsPerSecond);
    return result;
  };
  for (let round = 0; round < ROUNDS; round++) {
    const order: ('ours' | 'theirs')[] = round % 2 === 0 ? ['ours', 'theirs'] : ['theirs', 'ours'];
    for (const side of order) await measure(side);
    log(`${label} round ${round + 1}: ours ${fmt(rates.ours[round])}/s, reference ${fmt(rates.theirs[round])}/s`);
  }
  const ratio = spread(rates.ours.map((value, i) => value / rates.theirs[i]));
  return { ours: spread(rates.ours), theirs: spread(rates.theirs), ratio, errors };
}

async function timed(work: () => Promise<unknown>): Promise<Window> {
  const from = monotonicMicros();
  await work();
  return { from, to: monotonicMicros() };
}

async function cachedCsvUrl(s: ServerProcess): Promise<{ url: string; etag: string; body: Buffer }> {
  const url = exportUrl(s, 'small');
  await download(url);
  // The first answer streams the render; once its file is finished a HEAD carries its length.
  for (let i = 0; i < 200; i++) {
    const head = await download(url, {}, { method: 'HEAD' });
    if (head.headers['content-length']) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const body = Buffer.from(await (await fetch(url)).arrayBuffer());
  const etag = (await download(url, {}, { method: 'HEAD' })).headers.etag!;
  return { url, etag, body };
}

async function repeatDownloads(): Promise<void> {
  const run = async (nodeFlags: string[] = []) =>
    withServer(nodeFlags, async (s) => {
      const { url, body } = await cachedCsvUrl(s);
      const nginx = await startNginx(join(dir, 'nginx'), 'prices.csv', body, 'text/csv; charset=utf-8');
      try {
        return { ...(await versus('repeat CSV', url, nginx.url, {}, 32)), bytes: body.length };
      } finally {
        await nginx.stop();
      }
    });
  const result = await run();
  const ratio = result.ratio.median;
  figures.push({
    figure: `repeat requests/s, ${fmt(SIZES.small)}-item CSV (${(result.bytes / 1024).toFixed(0)} KiB), 32 connections`,
    measured: `median ${fmt(result.ours.median)} (${fmt(result.ours.min)}–${fmt(result.ours.max)}); ratio per round ${result.ratio.min.toFixed(3)}–${result.ratio.max.toFixed(3)}, ${ROUNDS} alternating rounds`,
    reference: `nginx (1 worker, sendfile) serving the same bytes: median ${fmt(result.theirs.median)} (${fmt(result.theirs.min)}–${fmt(result.theirs.max)})`,
    ratio,
    goal: '≥ 1.0×',
    met: metInEveryRound(result.ratio, 1) && result.errors.length === 0,
    profile: (nodeFlags) =>
      withServer(nodeFlags, async (s) => {
        const { url } = await cachedCsvUrl(s);
        return timed(() => wrk(url, { connections: 32, seconds: WRK_SECONDS }));
      }),
  });
  if (result.errors.length > 0) notes.push(`repeat CSV: ${result.errors.join('; ')}`);
}

async function revalidations(): Promise<void> {
  const { child: bare, address: bareUrl } = await startAddressPrinting('bench/bare-fastify.ts');
  try {
    const result = await withServer([], async (s) => {
      const { url, etag } = await cachedCsvUrl(s);
      const check = await download(url, { 'if-none-match': etag });
      if (check.status !== 304) throw new Error(`If-None-Match answered ${check.status}`);
      return { ...(await versus('304', url, `${bareUrl}/`, { 'If-None-Match': etag }, 32)) };
    });
    const ratio = result.ratio.median;
    figures.push({
      figure: '304 revalidations/s (key checked first), 32 connections',
      measured: `median ${fmt(result.ours.median)} (${fmt(result.ours.min)}–${fmt(result.ours.max)}); ratio per round ${result.ratio.min.toFixed(3)}–${result.ratio.max.toFixed(3)}, ${ROUNDS} alternating rounds`,
      reference: `a bare Fastify route returning a constant: median ${fmt(result.theirs.median)} (${fmt(result.theirs.min)}–${fmt(result.theirs.max)})`,
      ratio,
      goal: '≥ 0.5×',
      met: metInEveryRound(result.ratio, 0.5) && result.errors.length === 0,
      profile: (nodeFlags) =>
        withServer(nodeFlags, async (s) => {
          const { url, etag } = await cachedCsvUrl(s);
          return timed(() => wrk(url, { connections: 32, seconds: WRK_SECONDS, headers: { 'If-None-Match': etag } }));
        }),
    });
    if (result.errors.length > 0) notes.push(`304: ${result.errors.join('; ')}`);
  } finally {
    bare.kill('SIGTERM');
  }
}

/** Issue #21: 304s with metrics on ÷ off, median of ≥ 5 alternating rounds (bench/metrics-overhead.ts). */
async function metricsOverhead(): Promise<void> {
  const result = await measureMetricsOverhead({ command, databaseUrl: dbUrl, cwd: ROOT, cachedUrl: cachedCsvUrl, rounds: 5, seconds: WRK_SECONDS, log });
  const { throughput, perCpu } = result;
  figures.push({
    figure: '304 revalidations/s with metrics on ÷ off, 32 connections (median of 5 alternating rounds)',
    measured: `${throughput.median.toFixed(3)}× (rounds ${throughput.min.toFixed(3)}–${throughput.max.toFixed(3)}); per CPU-second ${perCpu.median.toFixed(3)}× (${perCpu.min.toFixed(3)}–${perCpu.max.toFixed(3)})`,
    reference: 'the same service with METRICS=off',
    ratio: throughput.median,
    cpuRatio: perCpu.median,
    goal: '≥ 0.95×',
    met: metInEveryRound(throughput, 0.95) && result.errors.length === 0,
  });
  if (result.errors.length > 0) notes.push(`304 with metrics: ${result.errors.join('; ')}`);
}

/**
 * 100 concurrent first requests for one variant, in ROUNDS rounds (each a fresh server, so each
 * starts uncached): met when every round made exactly one render and gave 100 identical 200s.
 */
async function singleFlight(): Promise<void> {
  const rounds: { renders: number; statuses: number[]; bodies: number; seconds: number }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const outcome = await withServer([], async (s) => {
      const url = exportUrl(s, 'medium', 'format=tsv&only_available=true');
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 100 }, () => download(url, {}, { hash: true })));
      const seconds = (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 300)); // the render's log line
      return { answers, renders: s.renders(), seconds };
    });
    const statuses = [...new Set(outcome.answers.map((a) => a.status))];
    const bodies = new Set(outcome.answers.map((a) => a.sha256)).size;
    rounds.push({ renders: outcome.renders, statuses, bodies, seconds: outcome.seconds });
    log(`100 concurrent first requests, round ${round + 1}: ${outcome.renders} render(s), statuses ${statuses.join(',')}, ${bodies} distinct bodies, ${outcome.seconds.toFixed(2)} s`);
  }
  const ok = rounds.every((r) => r.renders === 1 && r.statuses.length === 1 && r.statuses[0] === 200 && r.bodies === 1);
  const seconds = spread(rounds.map((r) => r.seconds));
  figures.push({
    figure: `100 concurrent first requests for one variant (${fmt(SIZES.medium)}-item TSV, filtered), ${ROUNDS} rounds`,
    measured: `renders per round ${rounds.map((r) => r.renders).join(', ')}; statuses {${[...new Set(rounds.flatMap((r) => r.statuses))].join(', ')}}; distinct bodies per round ${rounds.map((r) => r.bodies).join(', ')}; all 100 done in a median ${seconds.median.toFixed(2)} s (${seconds.min.toFixed(2)}–${seconds.max.toFixed(2)})`,
    reference: '—',
    ratio: null,
    goal: 'exactly 1 render, all 200, identical bytes, in every round',
    met: ok,
  });
}

/**
 * Every standalone figure script in bench/figures/ (or those --only names), each run as its own
 * process; its BENCH-RESULT lines (bench/lib/bench-result.ts) become rows of the table — the
 * median of its rounds' ratios (or values) with their min–max — and its other output a section.
 */
function figureScripts(): void {
  const scripts = readdirSync(join(ROOT, 'bench/figures')).filter((name) => name.endsWith('.ts')).sort();
  for (const script of scripts) {
    const name = script.replace(/\.ts$/, '');
    if (ONLY !== null && !ONLY.has(name)) continue;
    const scriptArgs = ['--rounds', '5', ...(QUICK ? ['--quick'] : [])];
    const output = otherScript(`figures/${script}`, scriptArgs, 45 * 60_000);
    const results = output.split('\n').filter((line) => line.startsWith(RESULT_PREFIX)).map((line) => JSON.parse(line.slice(RESULT_PREFIX.length)) as BenchResult);
    const readable = output.split('\n').filter((line) => !line.startsWith(RESULT_PREFIX)).join('\n');
    sections.push(`### bench/figures/${script} ${scriptArgs.join(' ')}\n\n\`\`\`\n${readable}\n\`\`\``);
    if (results.length === 0) notes.push(`bench/figures/${script} gave no figure (see its output below).`);
    for (const result of results) figures.push(figureOf(result));
  }
}

const round3 = (n: number) => (Math.abs(n) >= 100 ? fmt(n) : n.toFixed(Math.abs(n) >= 10 ? 1 : 3));

function figureOf(result: BenchResult): Figure {
  const ours = spread(result.ours);
  const rounds = `${result.ours.length} alternating rounds`;
  if (result.reference.length === 0) {
    return {
      figure: result.figure,
      measured: `median ${round3(ours.median)} ${result.unit} (rounds ${round3(ours.min)}–${round3(ours.max)}, ${rounds})${result.notes ? `; ${result.notes}` : ''}`,
      reference: result.referenceName,
      ratio: null,
      goal: result.goal,
      met: result.met,
    };
  }
  const theirs = spread(result.reference);
  const ratio = spread(roundRatios(result));
  return {
    figure: result.figure,
    measured: `median ${round3(ours.median)} ${result.unit} (${round3(ours.min)}–${round3(ours.max)}); ratio per round ${ratio.min.toFixed(3)}–${ratio.max.toFixed(3)}, ${rounds}${result.notes ? `; ${result.notes}` : ''}`,
    reference: `${result.referenceName}: median ${round3(theirs.median)} ${result.unit} (${round3(theirs.min)}–${round3(theirs.max)})`,
    ratio: ratio.median,
    goal: result.goal,
    met: result.met,
  };
}

/** Another engineer's script, run as it is; its output goes into RESULTS.md verbatim. */
function otherScript(file: string, scriptArgs: string[], timeoutMs: number): string {
  log(`running bench/${file} ${scriptArgs.join(' ')} …`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', file), ...scriptArgs], { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 16 << 20 });
  const output = `${run.stdout ?? ''}${run.status === 0 ? '' : `\n(exit ${run.status ?? run.signal}) ${(run.stderr ?? '').slice(-2000)}`}`.trim();
  log(output);
  return output;
}

function publishing(): void {
  const output = otherScript('publish.ts', [String(SIZES.large)], 30 * 60_000);
  sections.push(`### bench/publish.ts ${SIZES.large} (another engineer's script, its output)\n\n\`\`\`\n${output}\n\`\`\``);
  for (const dialect of ['SQLite', 'PostgreSQL']) {
    // Its summary line has been spelled "publish / reference = 0.55×" and "publishing runs at 0.55× the speed of …".
    const ratio = Number(new RegExp(`${dialect}:\\s+(?:publish / reference = |publishing runs at )([\\d.]+)×`).exec(output)?.[1] ?? NaN);
    const line = new RegExp(`publish → ${dialect}\\s+([\\d.]+ s\\s+[\\d,]+ items/s)`).exec(output)?.[1];
    const ref = new RegExp(`${dialect === 'SQLite' ? 'sqlite3 \\.import' : 'psql \\\\copy'} \\(reference\\)\\s+([\\d.]+ s\\s+[\\d,]+ items/s)`).exec(output)?.[1];
    figures.push({
      figure: `publishing ${fmt(SIZES.large)} items, ${dialect}, items/s`,
      measured: line?.replace(/\s+/g, ' ') ?? 'see bench/publish.ts below',
      reference: `${dialect === 'SQLite' ? 'sqlite3 .import' : 'psql \\copy'}${ref ? `: ${ref.replace(/\s+/g, ' ')}` : ''}`,
      ratio: Number.isNaN(ratio) ? null : ratio,
      goal: '≥ 0.5×',
      met: ratio >= 0.5,
    });
  }
}

/**
 * bench/ledger-304.ts: 304s/s with the delivery ledger on ÷ off (issue #15: ≥ 0.95×), as two apps
 * of one process pinned to one CPU (`--twins --pin`): two processes of the same code differ by more
 * than the 5 % measured (bench/RESULTS.md, "2026-11-26, morning").
 */
function ledgerRevalidations(): void {
  // Ten rounds of 1 s slices, ten per app, back to back: this machine changes speed for seconds
  // at a time, and short slices side by side share it (bench/RESULTS.md, "2026-11-26, late morning").
  const output = otherScript('ledger-304.ts', ['--twins', '--pin', '--rounds', '10', '--seconds', '1', '--cycles', '5'], 15 * 60_000);
  sections.push(`### bench/ledger-304.ts (its output)\n\n\`\`\`\n${output}\n\`\`\``);
  const ratio = Number(/on ÷ off: median ([\d.]+)×/.exec(output)?.[1] ?? NaN);
  const lowest = Number(/on ÷ off: median [\d.]+× \(min–max ([\d.]+)–/.exec(output)?.[1] ?? NaN);
  figures.push({
    figure: '304 revalidations/s with the delivery ledger on, median of 10 alternating rounds of 10 × 1 s slices per app (one process, two apps)',
    measured: /on ÷ off: (median .*?\))/.exec(output)?.[1] ?? 'see bench/ledger-304.ts below',
    reference: 'the same process\'s app with LEDGER_DAYS=0 (no ledger)',
    ratio: Number.isNaN(ratio) ? null : ratio,
    goal: '≥ 0.95×',
    met: metInEveryRound([lowest], 0.95),
  });
}

// ---------------------------------------------------------------------------------------------

function writeResults(): void {
  const file = ONLY || QUICK ? 'RESULTS.partial.md' : 'RESULTS.md';
  const previous = existsSync(join(ROOT, 'bench/RESULTS.md')) ? readFileSync(join(ROOT, 'bench/RESULTS.md'), 'utf8') : '';
  writeFileSync(join(ROOT, 'bench', file), renderResults({ figures, notes, sections, quick: QUICK, previous }));
  log(`\nwritten to bench/${file}`);
}

async function profileMisses(): Promise<void> {
  for (const figure of figures) {
    if ((figure.met && !args['profile-all']) || !figure.profile) continue;
    const profDir = join(dir, `prof-${figures.indexOf(figure)}`);
    mkdirSync(profDir);
    log(`profiling: ${figure.figure} …`);
    const window = await figure.profile(['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
    const { main, workers } = threadProfiles(profDir);
    if (!main) continue;
    const threads = workers.length === 0 ? '' : `\n\nIts ${workers.length} worker threads (page queries), summed:\n\n${framesTable(topFrames(workers, 8, window))}`;
    sections.push(`### Profile: ${figure.figure}\n\nThe server process under \`node --cpu-prof\`, self time as a share of its main thread's busy time while the figure was measured.\n\n${framesTable(topFrames(main, 20, window))}${threads}`);
  }
}

try {
  command = serverCommand();
  await prepare();
  if (wanted('first-csv')) {
    await firstExport(`first (uncached) CSV of ${fmt(SIZES.medium)} items over HTTP`, 'medium', '', 'csv-stringify', 3);
    await firstExport(`first (uncached) CSV of ${fmt(SIZES.large)} items over HTTP`, 'large', '', 'csv-stringify', 3);
  }
  if (wanted('first-xlsx')) await firstExport(`first XLSX of ${fmt(SIZES.medium)} items over HTTP`, 'medium', 'format=xlsx', 'exceljs', 5);
  if (wanted('rss')) await peakRss();
  if (wanted('repeat')) await repeatDownloads();
  if (wanted('304')) await revalidations();
  if (wanted('metrics-304')) await metricsOverhead();
  if (wanted('single-flight')) await singleFlight();
  if (wanted('publish') && !args['skip-others']) publishing();
  if (wanted('ledger-304')) ledgerRevalidations();
  figureScripts();
  if (!args['no-profile']) await profileMisses();
  if (wanted('others') && !args['skip-others']) {
    sections.push(`### bench/xlsx.ts (another engineer's script, its output)\n\n\`\`\`\n${otherScript('xlsx.ts', [], 20 * 60_000)}\n\`\`\``);
    if (existsSync(join(ROOT, 'bench/load.ts'))) {
      const output = otherScript('load.ts', ['--duration', '15', '--connections', '64'], 10 * 60_000);
      sections.push(`### bench/load.ts --duration 15 --connections 64 (another engineer's script, its output)\n\n\`\`\`\n${output}\n\`\`\``);
    }
  }
  console.log();
  for (const f of figures) log(`${f.met ? 'MET ' : 'MISS'}  ${f.ratio === null ? '' : `${f.ratio.toFixed(2)}×  `}${f.figure} (goal ${f.goal})`);
  writeResults();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
