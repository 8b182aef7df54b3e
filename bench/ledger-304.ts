/*
 * 304 revalidations a second with the delivery ledger on ÷ off (CONTRACT §12: recording must
 * not slow an answer; issue #15 asks ≥ 0.95×). Two servers on one SQLite file, one with
 * LEDGER_DAYS=30 and one with LEDGER_DAYS=0 (no ledger), measured by wrk in alternating
 * rounds so both see the same load from the rest of the (shared) machine; the figure is the
 * median of the rounds' ratios, with their min–max.
 *
 * With `--twins`, the two are one process with two apps (bench/lib/ledger-twins.ts), so what
 * separates them is the ledger alone, not two processes' JIT and placement.
 *
 *   node --import tsx bench/ledger-304.ts [--rounds 5] [--seconds 5] [--connections 32] [--profile] [--aa] [--pin] [--twins] [--cycles 1] [--keep-profiles DIR]
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/store/factory.js';
import { framesTable, monotonicMicros, threadProfiles, topFrames, type Window } from './cpu-profile.js';
import { benchStore } from './bench-data.js';
import { download } from './http-client.js';
import { cpuSeconds, startServer, type ServerProcess } from './server-process.js';
import { wrk } from './wrk.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '32' },
    // Both servers under --cpu-prof: their main threads' top frames in the last round are printed at the end.
    profile: { type: 'boolean', default: false },
    // Where to copy the profiles (.cpuprofile files), for a closer look than the printed tables.
    'keep-profiles': { type: 'string' },
    aa: { type: 'boolean', default: false },
    // The servers on the second CPU, wrk on the first.
    pin: { type: 'boolean', default: false },
    // Both apps in one process (bench/lib/ledger-twins.ts), a new process each round: the
    // spread between processes of the same code leaves the comparison.
    twins: { type: 'boolean', default: false },
    // Each round runs its order (on, off, off, on or the reverse) this many times, in slices of
    // --seconds, one right after the other, and the round's figure is the median of the ratios
    // across each change of app (see `adjacent` below).
    cycles: { type: 'string', default: '1' },
  },
});
const ROUNDS = Math.max(5, Number(args.rounds));
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
const CYCLES = Math.max(1, Number(args.cycles));
const ROOT = new URL('../', import.meta.url).pathname;
/** The "on" server's LEDGER_DAYS; `--aa` runs both without a ledger, to show what two processes of the same code differ by. */
const ON_DAYS = args.aa ? '0' : '30';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const dir = mkdtempSync(join(tmpdir(), 'price-export-ledger-bench-'));
const databaseUrl = `sqlite:${join(dir, 'bench.db')}`;
const servers: ServerProcess[] = [];
/** One of the two answering: its own process, or one app of the twins' process. */
interface Served {
  process: ServerProcess;
  base: string;
}
try {
  const store = await openDatabase(databaseUrl);
  await store.migrate();
  const key = await benchStore(store, 'bench-ledger', 1_000);
  await store.close();

  const start = (ledgerDays: string, round: number) =>
    startServer({
      command: ['--import', 'tsx', join(ROOT, 'src/cli/index.ts')], databaseUrl, cwd: ROOT, env: { LEDGER_DAYS: ledgerDays }, cpus: args.pin ? '1' : undefined,
      nodeFlags: args.profile && round === ROUNDS - 1 ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, `profile-${ledgerDays}`)}`] : [],
    });
  /**
   * One process, two apps: one with the ledger (none with --aa), one without. Which of the two
   * is built and listens first alternates every two rounds (the order they are measured in
   * alternates every round, so all four combinations come up): an A/A run showed the first app
   * ahead (1.041×).
   */
  const onFirst = (round: number) => Math.floor(round / 2) % 2 === 0;
  const startTwins = (round: number) =>
    startServer({
      command: ['--import', 'tsx', join(ROOT, 'bench/lib/ledger-twins.ts')], databaseUrl, cwd: ROOT, apps: 2,
      env: { TWIN_LEDGER_DAYS: onFirst(round) ? `${ON_DAYS},0` : `0,${ON_DAYS}` }, cpus: args.pin ? '1' : undefined,
      nodeFlags: args.profile && round === ROUNDS - 1 ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'profile-twins')}`] : [],
    });
  const path = `/api/export/latest?key=${key}`;
  let etag = '';
  /**
   * A new pair of servers. Two processes of the same code differ by up to ±13 % in CPU per 304
   * (their JIT's decisions, where their heaps and threads land: two A/A pairs, bench/RESULTS.md
   * "2026-11-25, night"), so one pair for every round measured the pair, not the ledger: each
   * round starts its own, in alternating order, and warms both before measuring.
   */
  const freshPair = async (round: number): Promise<{ on: Served; off: Served }> => {
    for (const s of servers.splice(0)) await s.stop();
    const pair: Partial<Record<'on' | 'off', Served>> = {};
    if (args.twins) {
      const s = await startTwins(round);
      servers.push(s);
      pair.on = { process: s, base: s.bases[onFirst(round) ? 0 : 1] };
      pair.off = { process: s, base: s.bases[onFirst(round) ? 1 : 0] };
    } else {
      for (const which of round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const s = await start(which === 'on' ? ON_DAYS : '0', round);
        servers.push(s);
        pair[which] = { process: s, base: s.base };
      }
    }
    etag ||= (await download(`${pair.on!.base}${path}`)).headers.etag as string;
    for (const { base } of [pair.on!, pair.off!]) {
      const check = await download(`${base}${path}`, { 'if-none-match': etag });
      if (check.status !== 304) throw new Error(`If-None-Match answered ${check.status}`);
      // Warmed before measuring (the twins longer: both apps share one JIT, which settles over seconds).
      await wrk(`${base}${path}`, { connections: CONNECTIONS, seconds: args.twins ? 3 : 1, headers: { 'If-None-Match': etag } });
    }
    return { on: pair.on!, off: pair.off! };
  };

  const windows: Record<'on' | 'off', Window | null> = { on: null, off: null };
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const rates = { on: [] as number[], off: [] as number[] };
  const problems: string[] = [];
  /** Per round with --cycles: the median ratio across each change of app. */
  const adjacent: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const { on, off } = await freshPair(round);
    // Alternate which goes first, so neither always runs right after the other's burst. The twins
    // run on, off, off, on (or the reverse): in one process the later runs are faster (its JIT
    // still settling), and the mirrored order gives both the same share of early and late.
    const pairOrder = round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
    const cycle = args.twins ? [...pairOrder, ...[...pairOrder].reverse()] : pairOrder;
    const order = Array.from({ length: CYCLES }, () => cycle).flat();
    const totals = { on: { requests: 0, seconds: 0, cpu: 0 }, off: { requests: 0, seconds: 0, cpu: 0 } };
    let previous: 'on' | 'off' | null = null;
    const slices: { which: 'on' | 'off'; rate: number }[] = [];
    for (const which of order) {
      const s = which === 'on' ? on : off;
      // The ledger writes what remains of its batch a second after the last answer (a full batch,
      // 5,000 records, is written as it fills, inside the run): in one process (--twins) that
      // write must not fall into the other app's run, so runs of 5 s wait at a change of app
      // (both ways: a run right after an idle wait is slower, and a wait after the ledger's app
      // only favoured it in an A/A run). Slices (--cycles) run back to back: an idle wait is
      // where this machine most often changed speed (bench/RESULTS.md, "2026-11-26, late
      // morning"), and the remainder of a batch of runs costs well under 1 ms to write.
      if (args.twins && CYCLES === 1 && previous !== which) await new Promise((resolve) => setTimeout(resolve, 1_500));
      previous = which;
      const cpuBefore = cpuSeconds(s.process.pid);
      const from = monotonicMicros();
      const run = await wrk(`${s.base}${path}`, { connections: CONNECTIONS, seconds: SECONDS, headers: { 'If-None-Match': etag }, cpus: args.pin ? '0' : undefined });
      // A few wrk timeouts on a loaded machine are reported, not fatal; the ratio still compares like with like.
      if (run.errors.length > 0) problems.push(`round ${round + 1} ${which}: ${run.errors.join('; ')}`);
      totals[which].requests += run.requestsPerSecond * SECONDS;
      totals[which].seconds += SECONDS;
      slices.push({ which, rate: run.requestsPerSecond });
      totals[which].cpu += cpuSeconds(s.process.pid) - cpuBefore;
      windows[which] = { from, to: monotonicMicros() };
    }
    const result = Object.fromEntries((['on', 'off'] as const).map((which) => {
      const t = totals[which];
      return [which, { rps: t.requests / t.seconds, cpuPerRequest: t.cpu / t.requests }];
    })) as Record<'on' | 'off', { rps: number; cpuPerRequest: number }>;
    rates.on.push(result.on.rps);
    rates.off.push(result.off.rps);
    ratios.push(result.on.rps / result.off.rps);
    cpuRatios.push(result.off.cpuPerRequest / result.on.cpuPerRequest);
    console.log(`round ${round + 1}: ledger on ${Math.round(result.on.rps)}/s, off ${Math.round(result.off.rps)}/s, ratio ${(result.on.rps / result.off.rps).toFixed(3)}`);
    if (CYCLES > 1) {
      /*
       * This machine runs at one of two speeds for seconds at a time (slices of one app in a row
       * read 12,000/s then 23,000/s): a round's sums say mostly which app had more fast seconds.
       * Two slices side by side, one of each app, nearly always share a speed, so the round's
       * figure is the median of on ÷ off across each change of app, a flip between them an outlier.
       */
      const across: number[] = [];
      for (let i = 1; i < slices.length; i++) {
        const [a, b] = [slices[i - 1], slices[i]];
        if (a.which !== b.which) across.push(a.which === 'on' ? a.rate / b.rate : b.rate / a.rate);
      }
      adjacent.push(median(across));
      console.log(`  slices (304/s, in order): ${slices.map((x) => `${x.which} ${Math.round(x.rate)}`).join(', ')}; across each change of app: median ${median(across).toFixed(3)}×`);
    }
  }
  /*
   * A round's order may favour one of the two (in one run, the first six rounds read 0.948,
   * 0.999, 0.936, 0.993, 0.943, 0.997: lower whenever the ledger's app went first), and rounds
   * alternate it, so a median over an odd count of rounds leans to one order. Each pair of
   * rounds (1–2, 3–4, …) has both: the geometric mean of its two ratios is free of the order,
   * and these are its median.
   */
  const balanced = Array.from({ length: Math.floor(ratios.length / 2) }, (_, i) => Math.sqrt(ratios[2 * i] * ratios[2 * i + 1]));
  const fmt = (n: number) => n.toFixed(3);
  console.log(`304/s with the ledger on ÷ off: median ${fmt(median(ratios))}× (min–max ${fmt(Math.min(...ratios))}–${fmt(Math.max(...ratios))}) over ${ROUNDS} alternating rounds of ${CYCLES * (args.twins ? 2 : 1)} × ${SECONDS} s per app, ${CONNECTIONS} connections`);
  if (adjacent.length > 0) console.log(`across each change of app (slices side by side, median per round): median ${fmt(median(adjacent))}× (min–max ${fmt(Math.min(...adjacent))}–${fmt(Math.max(...adjacent))}) over ${adjacent.length} rounds`);
  if (balanced.length > 0) console.log(`pairs of rounds of mirrored order (geometric mean of each pair's two ratios): median ${fmt(median(balanced))}× (min–max ${fmt(Math.min(...balanced))}–${fmt(Math.max(...balanced))}) over ${balanced.length} pairs`);
  console.log(`per CPU-second of the server (requests per CPU-second, on ÷ off): median ${fmt(median(cpuRatios))}× (min–max ${fmt(Math.min(...cpuRatios))}–${fmt(Math.max(...cpuRatios))})`);
  for (const problem of problems) console.log(`wrk: ${problem}`);
  console.log(`medians: on ${Math.round(median(rates.on))}/s, off ${Math.round(median(rates.off))}/s`);

  // The ledger did record: every 304 of the "on" server is in it (a second for the last batch).
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const check = await openDatabase(databaseUrl);
  const recorded = (await check.deliveries.ledger.page('bench-ledger', 1, null)).length;
  await check.close();
  console.log(`ledger rows written by the "on" server: ${recorded > 0 ? 'yes' : 'NONE (the ledger did not record)'}`);
  for (const s of servers.splice(0)) await s.stop();
  // The last round's windows, to read the kept profiles by.
  if (args['keep-profiles']) console.log(`profile windows (monotonic µs): ${JSON.stringify(windows)}`);
  if (args.profile) {
    for (const [which, days] of [['on', '30'], ['off', '0']] as const) {
      // The twins' one profile holds both apps: each one's window is its own wrk run.
      const { main } = threadProfiles(join(dir, args.twins ? 'profile-twins' : `profile-${which === 'on' ? ON_DAYS : days}`));
      const window = windows[which];
      if (main && window) console.log(`\nThe "${which}" server's main thread, last round:\n\n${framesTable(topFrames(main, 30, window))}`);
    }
  }
} finally {
  for (const s of servers) await s.stop();
  if (args['keep-profiles']) {
    for (const name of ['profile-twins', `profile-${ON_DAYS}`, 'profile-0']) {
      try {
        cpSync(join(dir, name), join(args['keep-profiles'], name), { recursive: true });
      } catch {
        // Not every run leaves all three.
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
