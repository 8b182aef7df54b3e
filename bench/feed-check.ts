/*
 * The feed check's cost against the YML export it checks (issue #17: "checking 1M items ≤ 2× the
 * time of the YML export"), in memory: both read the same items from the store the same way, so
 * what differs is the rules against the writer. Also the cost publishing pays for its warnings
 * (every target's rules over each item). CPU seconds, so other work on a shared machine does not
 * count. Run: node --import tsx bench/feed-check.ts [items]
 */
import { LEGACY_COLUMNS } from '../src/model/columns.js';
import { FeedCheckTally } from '../src/model/feed-check.js';
import { FEED_CHECK_TARGETS, feedRules } from '../src/model/feed-rules.js';
import type { PriceItem } from '../src/model/price-item.js';
import { DEFAULT_TABULAR_OPTIONS } from '../src/model/profile.js';
import type { ExportMeta } from '../src/model/export-writer.js';
import { ymlWriter } from '../src/formats/yml.js';
import { syntheticItem } from './bench-data.js';

const ITEMS = Number(process.argv[2] ?? 1_000_000);
const BATCH = 1000;
const CATEGORIES = Array.from({ length: 40 }, (_, i) => `Раздел ${i % 8} / Подраздел ${i}`);

/** The items, generated a batch at a time (never the list): as the store hands them out. */
async function* batches(): AsyncGenerator<readonly PriceItem[]> {
  for (let start = 0; start < ITEMS; start += BATCH) {
    const batch: PriceItem[] = [];
    for (let i = start; i < Math.min(start + BATCH, ITEMS); i++) batch.push(syntheticItem(i));
    yield batch;
  }
}

const meta: ExportMeta = {
  store: { id: 'bench', name: 'Bench', currency: 'RUB', url: null, company: null },
  priceList: { version: 1, publishedAt: new Date(), itemCount: ITEMS, currencies: ['RUB'] },
  columns: LEGACY_COLUMNS,
  legacy: true,
  tabular: DEFAULT_TABULAR_OPTIONS,
  // Every category path the synthetic items use, each level declared, and the default one.
  categories: [
    ...[...new Set(CATEGORIES.map((path) => path.split(' / ')[0]))].map((name, i) => ({ id: i + 1, name, parentId: null, path: name })),
    ...CATEGORIES.map((path, i) => ({ id: 100 + i, name: path.split(' / ')[1], parentId: 1 + Number(path[7]), path })),
    { id: 999, name: 'Other', parentId: null, path: '' },
  ],
};

async function cpuOf(run: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

const generation = await cpuOf(async () => { for await (const batch of batches()) void batch; });
const yml = await cpuOf(async () => { for await (const chunk of ymlWriter.render(batches(), meta)) void chunk; });
const check = await cpuOf(async () => {
  const tally = new FeedCheckTally(feedRules('yml', LEGACY_COLUMNS), meta.store);
  for await (const batch of batches()) for (const item of batch) tally.add(item);
});
const allTargets = await cpuOf(async () => {
  const tallies = FEED_CHECK_TARGETS.map((target) => new FeedCheckTally(feedRules(target, LEGACY_COLUMNS), meta.store));
  for await (const batch of batches()) for (const item of batch) for (const tally of tallies) tally.add(item);
});

const net = (seconds: number) => Math.max(seconds - generation, 0);
console.log(`${ITEMS.toLocaleString('en-US')} items, CPU seconds (item generation ${generation.toFixed(2)} s subtracted):`);
console.log(`  YML export (writer)            ${net(yml).toFixed(2)} s`);
console.log(`  YML feed check (rules)         ${net(check).toFixed(2)} s  = ${(net(check) / net(yml)).toFixed(2)} × the export`);
console.log(`  all four targets (publish)     ${net(allTargets).toFixed(2)} s`);
