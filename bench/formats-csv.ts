/*
 * Pure formatting speed of the legacy CSV writer against csv-stringify (issue "≥ 3× csv-stringify"):
 * 1,000,000 in-memory items, no database, no HTTP. Run: node --import tsx bench/formats-csv.ts [rows]
 */
import { stringify } from 'csv-stringify';
import { LEGACY_COLUMNS } from '../src/model/columns.js';
import { formatMoney } from '../src/model/money.js';
import type { PriceItem } from '../src/model/price-item.js';
import { DEFAULT_TABULAR_OPTIONS } from '../src/model/profile.js';
import { csvWriter } from '../src/formats/delimited.js';
import type { ExportMeta } from '../src/model/export-writer.js';
import { syntheticItem } from './bench-data.js';
import { alternatingRounds, spread } from './lib/bench-result.js';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const BATCH = 1000;

async function* batchesOf(items: readonly PriceItem[]): AsyncGenerator<readonly PriceItem[]> {
  for (let start = 0; start < items.length; start += BATCH) yield items.slice(start, start + BATCH);
}

const meta: ExportMeta = {
  store: { id: 'bench', name: 'Bench', currency: 'RUB', url: null, company: null },
  priceList: { version: 1, publishedAt: new Date(), itemCount: ROWS, currencies: ['RUB'] },
  columns: LEGACY_COLUMNS,
  legacy: true,
  tabular: DEFAULT_TABULAR_OPTIONS,
  categories: [],
};

/** CPU seconds of this process since `start`: on a shared machine wall time also counts other people's work. */
const cpuSeconds = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
};

async function timeCsvWriter(items: readonly PriceItem[]): Promise<{ seconds: number; cpu: number; bytes: number; chunks: number }> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  let bytes = 0;
  let chunks = 0;
  for await (const chunk of csvWriter.render(batchesOf(items), meta)) {
    bytes += chunk.byteLength;
    chunks++;
  }
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, cpu: cpuSeconds(cpu), bytes, chunks };
}

async function timeCsvStringify(items: readonly PriceItem[]): Promise<{ seconds: number; cpu: number; bytes: number }> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  let bytes = 0;
  const stringifier = stringify({ header: true, columns: LEGACY_COLUMNS.map((c) => c.key), record_delimiter: '\r\n', quoted_match: /^ | $/ });
  const done = (async () => {
    for await (const chunk of stringifier) bytes += (chunk as Buffer).byteLength;
  })();
  for await (const batch of batchesOf(items)) {
    for (const item of batch) {
      const ok = stringifier.write([
        item.offer_id,
        item.name,
        formatMoney(item.price),
        item.old_price === null ? '' : formatMoney(item.old_price),
        item.currency,
        item.available ? '1' : '0',
        item.quantity === null ? '' : String(item.quantity),
        item.url ?? '',
      ]);
      if (!ok) await new Promise((resolve) => stringifier.once('drain', resolve));
    }
  }
  stringifier.end();
  await done;
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, cpu: cpuSeconds(cpu), bytes };
}

const items = Array.from({ length: ROWS }, (_, i) => syntheticItem(i));
await timeCsvWriter(items); // warm-up: let V8 optimize the row and chunk loops
// Five alternating rounds, each figure their median with min–max (never the best round: on a
// shared machine the best is the luckiest, not the code's).
const ours: Array<{ seconds: number; cpu: number; bytes: number; chunks: number }> = [];
const theirs: Array<{ seconds: number; cpu: number }> = [];
await alternatingRounds(
  5,
  async () => (ours.push(await timeCsvWriter(items)), 0),
  async () => (theirs.push(await timeCsvStringify(items)), 0),
);
const rates = (runs: ReadonlyArray<{ seconds: number; cpu: number }>) => {
  const wall = spread(runs.map((run) => ROWS / run.seconds));
  const cpu = spread(runs.map((run) => ROWS / run.cpu));
  const shown = (value: number) => Math.round(value).toLocaleString('en-US');
  return `${shown(wall.median)} rows/s wall (${shown(wall.min)}–${shown(wall.max)}), ${shown(cpu.median)} per CPU-second (${shown(cpu.min)}–${shown(cpu.max)})`;
};
const ratio = (of: (run: { seconds: number; cpu: number }) => number) => {
  const each = spread(ours.map((run, i) => of(theirs[i]!) / of(run)));
  return `${each.median.toFixed(2)}× (rounds ${each.min.toFixed(2)}–${each.max.toFixed(2)})`;
};
console.log(`csvWriter (legacy):  ${rates(ours)}, ${(ours[0]!.bytes / 2 ** 20).toFixed(1)} MiB in ${ours[0]!.chunks} chunks`);
console.log(`csv-stringify:       ${rates(theirs)}`);
console.log(`ratio, median of 5 alternating rounds: ${ratio((run) => run.seconds)} wall, ${ratio((run) => run.cpu)} CPU`);
