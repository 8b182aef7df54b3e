/*
 * XLSX speed and memory (the issue: "≥ 5× exceljs's streaming WorkbookWriter", "memory flat").
 * Run: node --import tsx bench/xlsx.ts
 *
 * Each part runs in its own process so that its peak RSS is its own:
 *   prices   100,000 in-memory items through xlsxWriter, then through exceljs's
 *            stream.xlsx.WorkbookWriter writing the same cells (both into a byte counter)
 *   million  1,000,000 generated items through xlsxWriter: peak RSS stays flat
 *   summary  100,000 products × 30 competitors through renderSummaryMatrix
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { LEGACY_COLUMNS } from '../src/model/columns.js';
import type { Competitor, PriceItem } from '../src/model/price-item.js';
import { DEFAULT_TABULAR_OPTIONS } from '../src/model/profile.js';
import { xlsxWriter } from '../src/formats/xlsx/prices-writer.js';
import { renderSummaryMatrix } from '../src/formats/xlsx/summary-writer.js';
import { syntheticItem } from './bench-data.js';
import { exceljsBytes } from './exceljs-reference.js';
import { alternatingRounds, median, spread } from './lib/bench-result.js';
import type { ExportMeta } from '../src/model/export-writer.js';

const BATCH = 1000;
const COMPETITORS = Array.from({ length: 40 }, (_, i) => `shop-${String(i).padStart(2, '0')}.example`);

/** 30 of the 40 competitors, a different window per product, prices around ours. */
function competitorsOf(i: number, ours: number): Competitor[] {
  return Array.from({ length: 30 }, (_, k) => ({
    name: COMPETITORS[(i + k) % COMPETITORS.length]!,
    price: Math.max(0, ours + (((i * 31 + k * 17) % 201) - 100) * 10),
    url: null,
    available: k % 3 === 0 ? null : k % 3 === 1,
  }));
}

async function* generated(count: number, withCompetitors: boolean): AsyncGenerator<readonly PriceItem[]> {
  for (let start = 0; start < count; start += BATCH) {
    const batch: PriceItem[] = [];
    for (let i = start; i < Math.min(start + BATCH, count); i++) {
      const item = syntheticItem(i);
      batch.push(withCompetitors ? { ...item, competitors: competitorsOf(i, item.price) } : item);
    }
    yield batch;
  }
}

async function* fromMemory(items: readonly PriceItem[]): AsyncGenerator<readonly PriceItem[]> {
  for (let start = 0; start < items.length; start += BATCH) yield items.slice(start, start + BATCH);
}

function meta(itemCount: number): ExportMeta {
  return {
    store: { id: 'bench', name: 'Bench', currency: 'RUB', url: null, company: null },
    priceList: { version: 1, publishedAt: new Date('2026-01-01T00:00:00Z'), itemCount, currencies: ['RUB'] },
    columns: LEGACY_COLUMNS,
    legacy: true,
    tabular: DEFAULT_TABULAR_OPTIONS,
    categories: [],
  };
}

async function drain(chunks: AsyncIterable<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const chunk of chunks) bytes += chunk.length;
  return bytes;
}

const seconds = (since: number): number => (performance.now() - since) / 1000;

interface Run {
  seconds: number;
  /** CPU of the whole process, deflate threads included. */
  cpuSeconds: number;
  /** Time the main thread was busy (event-loop utilization): what bounds rows/s once deflate has a core of its own. */
  mainThreadSeconds: number;
  bytes: number;
}

/** One run of `run`: its seconds, CPU, main-thread time and bytes. */
async function measure(run: () => Promise<number>): Promise<Run> {
  const cpu = process.cpuUsage();
  const loop = performance.eventLoopUtilization();
  const start = performance.now();
  const bytes = await run();
  const took = seconds(start);
  const used = process.cpuUsage(cpu);
  const busy = performance.eventLoopUtilization(loop).active / 1000;
  return { seconds: took, cpuSeconds: (used.user + used.system) / 1e6, mainThreadSeconds: busy, bytes };
}

/** The median of each of the runs' measures (never the fastest run: on a shared machine that is the luckiest). */
function medianRun(runs: readonly Run[]): Run {
  const of = (key: keyof Run) => median(runs.map((run) => run[key]));
  return { seconds: of('seconds'), cpuSeconds: of('cpuSeconds'), mainThreadSeconds: of('mainThreadSeconds'), bytes: of('bytes') };
}
const peakRssMb = (): number => Math.round(process.resourceUsage().maxRSS / 1024);

async function part(name: string): Promise<Record<string, number>> {
  if (name === 'prices') {
    const rows = 100_000;
    const items = Array.from({ length: rows }, (_, i) => syntheticItem(i));
    await drain(xlsxWriter.render(fromMemory(items.slice(0, 20_000)), meta(20_000))); // warm up the JIT
    // Five alternating rounds; each figure the median, the ratio's min–max beside it.
    const oursRuns: Run[] = [];
    const theirRuns: Run[] = [];
    await alternatingRounds(
      5,
      async () => (oursRuns.push(await measure(() => drain(xlsxWriter.render(fromMemory(items), meta(rows))))), 0),
      async () => (theirRuns.push(await measure(() => exceljsBytes(items))), 0),
    );
    const [ours, theirs] = [medianRun(oursRuns), medianRun(theirRuns)];
    const wallRatios = spread(oursRuns.map((run, i) => theirRuns[i]!.seconds / run.seconds));
    return {
      rows,
      xlsxWriterRowsPerS: Math.round(rows / ours.seconds),
      xlsxWriterMainThreadUsPerRow: (ours.mainThreadSeconds / rows) * 1e6,
      xlsxWriterCpuUsPerRow: (ours.cpuSeconds / rows) * 1e6,
      xlsxWriterMB: ours.bytes / 1e6,
      exceljsRowsPerS: Math.round(rows / theirs.seconds),
      exceljsMainThreadUsPerRow: (theirs.mainThreadSeconds / rows) * 1e6,
      exceljsCpuUsPerRow: (theirs.cpuSeconds / rows) * 1e6,
      exceljsMB: theirs.bytes / 1e6,
      ratioWall: wallRatios.median,
      ratioWallMin: wallRatios.min,
      ratioWallMax: wallRatios.max,
      ratioMainThread: median(oursRuns.map((run, i) => theirRuns[i]!.mainThreadSeconds / run.mainThreadSeconds)),
    };
  }
  if (name === 'million') {
    const rows = 1_000_000;
    // One run: an absolute time and the process's peak RSS, no reference to alternate with.
    const run = await measure(() => drain(xlsxWriter.render(generated(rows, false), meta(rows))));
    return {
      rows, seconds: run.seconds, cpuSeconds: run.cpuSeconds, mainThreadSeconds: run.mainThreadSeconds,
      rowsPerS: Math.round(rows / run.seconds), MB: run.bytes / 1e6, peakRssMB: peakRssMb(),
    };
  }
  if (name === 'summary') {
    const products = 100_000;
    const run = await measure(() => drain(renderSummaryMatrix(() => generated(products, true), meta(products))));
    return {
      products, competitorsPerProduct: 30, offersRows: products * 30,
      seconds: run.seconds, cpuSeconds: run.cpuSeconds, mainThreadSeconds: run.mainThreadSeconds, MB: run.bytes / 1e6, peakRssMB: peakRssMb(),
    };
  }
  throw new Error(`unknown part ${name}`);
}

const only = process.argv[2];
if (only) {
  console.log(JSON.stringify(await part(only)));
} else {
  const self = fileURLToPath(import.meta.url);
  for (const name of ['prices', 'million', 'summary']) {
    const run = spawnSync(process.execPath, [...process.execArgv, self, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (run.status !== 0) throw new Error(`${name} failed`);
    const figures = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, number>;
    const shown = Object.entries(figures).map(([key, value]) => `${key}=${Number.isInteger(value) ? value : value.toFixed(2)}`);
    console.log(`${name.padEnd(8)} ${shown.join('  ')}`);
  }
}
