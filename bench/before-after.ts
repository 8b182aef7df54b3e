/*
 * This tree against an earlier commit, figure by figure, in alternating rounds: did a change
 * make anything slower? (Issue #12 asked it of the redesign: "npm run bench figures do not get
 * worse".) Both trees are built, each fills its own SQLite database with its own
 * bench/bench-data.ts, and each figure is measured on both in ≥ 5 rounds, the order swapped
 * every round; the figure is the median of the per-round ratios now ÷ before (> 1: faster
 * now), with min–max, printed as BENCH-RESULT lines (bench/lib/bench-result.ts).
 *
 *   node --import tsx bench/before-after.ts --before <commit> [--after <commit>] [--rounds 5] [--quick] [--seconds 5] [--only 304,publishing] [--database-url postgres://…]
 *
 * Not part of `npm run bench` (it builds a second tree); its output goes into RESULTS.md by hand.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { rawItem } from './bench-data.js';
import { download } from './http-client.js';
import { alternatingRounds, emitResult, roundRatios, metInEveryRound } from './lib/bench-result.js';
import { startServer, type ServerProcess } from './server-process.js';
import { wrk } from './wrk.js';
import { freshDatabases } from './lib/fresh-databases.js';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    // Another commit instead of this tree as the "now" side.
    after: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    quick: { type: 'boolean', default: false },
    // Only the figures whose name contains one of these words (comma-separated), e.g. "304,publishing".
    only: { type: 'string' },
    // Items of the publication figures (default 100,000; 20,000 with --quick).
    'publish-items': { type: 'string' },
    // The served figures (first renders, repeats, 304s) on PostgreSQL: each side gets a new
    // database of this server, dropped at the end. Publication figures stay on SQLite.
    'database-url': { type: 'string' },
  },
});
if (!args.before) {
  console.error('usage: node --import tsx bench/before-after.ts --before <commit> [--after <commit>] [--rounds 5] [--quick] [--seconds 5] [--only 304,publishing]');
  process.exit(2);
}
const ROOT = new URL('..', import.meta.url).pathname;
const ROUNDS = Math.max(5, Number(args.rounds));
const SECONDS = Number(args.seconds);
const FIRST_COUNT = args.quick ? 20_000 : 100_000;
const PUBLISH_COUNT = Number(args['publish-items'] ?? (args.quick ? 20_000 : 100_000));
const work = mkdtempSync(join(tmpdir(), 'price-export-before-after-'));

interface Side {
  name: 'before' | 'now';
  tree: string;
  entry: string;
  databaseUrl: string;
  keys: { small: string; first: string };
}

function run(command: string, commandArgs: string[], cwd: string): string {
  const result = spawnSync(command, commandArgs, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(' ')} (in ${cwd}): ${result.stderr || result.stdout}`);
  return result.stdout;
}

/** Builds a tree into its own output folder (tsc emits even past a type error; the entry decides). */
function build(tree: string, out: string): string {
  spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(tree, 'tsconfig.build.json'), '--outDir', out, '--sourceMap', 'false'], { cwd: tree, stdio: 'ignore' });
  // The page assets (real files since the redesign); older copy-assets scripts knew only dist/.
  const assets = join(tree, 'src/http/pages/assets');
  if (existsSync(assets)) cpSync(assets, join(out, 'http/pages/assets'), { recursive: true });
  const entry = join(out, 'cli', 'index.js');
  if (!existsSync(entry)) throw new Error(`the build of ${tree} has no ${entry}`);
  return entry;
}

/**
 * Fills a database with the tree's own bench-data (its own store API) and prints the keys and the
 * seconds a publication of `count` items took. The factory was `openStore` before the redesign.
 */
function fill(tree: string, databaseUrl: string, stores: Record<string, number>): { keys: Record<string, string>; seconds: Record<string, number> } {
  const script = join(work, `fill-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(
    script,
    `import * as factory from ${JSON.stringify(join(tree, 'src/store/factory.ts'))};
import { benchStore } from ${JSON.stringify(join(tree, 'bench/bench-data.ts'))};
const open = (factory as any).openDatabase ?? (factory as any).openStore;
const db = await open(${JSON.stringify(databaseUrl)});
await db.migrate();
const keys: Record<string, string> = {};
const seconds: Record<string, number> = {};
for (const [id, count] of Object.entries(${JSON.stringify(stores)})) {
  const started = performance.now();
  keys[id] = await benchStore(db, id, count as number);
  seconds[id] = (performance.now() - started) / 1000;
}
await db.close();
console.log(JSON.stringify({ keys, seconds }));
`,
  );
  const output = run(process.execPath, ['--import', 'tsx', script], tree);
  return JSON.parse(output.trim().split('\n').pop()!);
}

async function withServer<T>(side: Side, body: (server: ServerProcess) => Promise<T>): Promise<T> {
  const server = await startServer({ command: [side.entry], databaseUrl: side.databaseUrl, cwd: side.tree });
  try {
    return await body(server);
  } finally {
    await server.stop();
  }
}

/** Items a second of one uncached download on a freshly started server (its render cache is empty). */
async function firstRender(side: Side, format: string): Promise<number> {
  return withServer(side, async (server) => {
    await download(`${server.base}/api/me`, { 'x-api-key': side.keys.small });
    const answer = await download(`${server.base}/api/export/latest?key=${side.keys.first}&format=${format}`);
    if (answer.status !== 200) throw new Error(`${side.name} ${format}: status ${answer.status}`);
    return FIRST_COUNT / answer.seconds;
  });
}

/** A cached 10k-item CSV, then wrk: repeat downloads a second, or 304s with its ETag. */
async function cachedLoad(side: Side, revalidate: boolean): Promise<number> {
  return withServer(side, async (server) => {
    const url = `${server.base}/api/export/latest?key=${side.keys.small}`;
    await download(url);
    let etag = '';
    for (let i = 0; i < 400; i++) {
      const head = await download(url, {}, { method: 'HEAD' });
      etag = head.headers.etag as string;
      if (head.headers['content-length']) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const result = await wrk(url, { connections: 32, seconds: SECONDS, headers: revalidate ? { 'If-None-Match': etag } : {} });
    if (result.errors.length > 0) throw new Error(`${side.name}: ${result.errors.join('; ')}`);
    return result.requestsPerSecond;
  });
}

async function figure(name: string, unit: string, measure: (side: Side) => Promise<number>, before: Side, now: Side): Promise<void> {
  if (args.only && !args.only.split(',').some((word) => name.includes(word))) return;
  const rounds = await alternatingRounds(ROUNDS, () => measure(now), () => measure(before));
  emitResult({
    figure: `${name}: ${args.after ?? 'now'} ÷ ${args.before}`,
    unit,
    higherIsBetter: true,
    ours: rounds.ours,
    reference: rounds.reference,
    referenceName: `the same figure on commit ${args.before}`,
    goal: '≥ 0.95× (not worse beyond noise)',
    met: metInEveryRound(roundRatios({ ...rounds, higherIsBetter: true }), 0.95),
  });
}

/** The served figures' database, named in their titles. */
const served = args['database-url'] ? ', PostgreSQL' : ', SQLite';
const databases = freshDatabases(work, args['database-url']);

try {
  const checkout = (name: string, commit: string) => {
    const tree = join(work, name);
    execFileSync('git', ['worktree', 'add', '--detach', tree, commit], { cwd: ROOT, stdio: 'ignore' });
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
    return tree;
  };
  const trees = [['before', checkout('before', args.before)], ['now', args.after ? checkout('now', args.after) : ROOT]] as const;
  const sides: Side[] = [];
  for (const [name, tree] of trees) {
    console.log(`building ${name} …`);
    // Inside the tree, so that the build finds its node_modules and its package.json's module type.
    const entry = build(tree, join(tree, '.cache', `before-after-${name}`));
    const databaseUrl = await databases.url(name);
    const { keys } = fill(tree, databaseUrl, { small: 10_000, first: FIRST_COUNT });
    sides.push({ name, tree, entry, databaseUrl, keys: keys as Side['keys'] });
  }
  const [before, now] = sides;
  for (const format of ['csv', 'tsv', 'xlsx', 'json', 'xml', 'yml']) {
    await figure(`first (uncached) ${format.toUpperCase()} of ${FIRST_COUNT.toLocaleString('en-US')} items over HTTP${served}`, 'items/s', (side) => firstRender(side, format), before, now);
  }
  await figure(`repeat downloads of a cached 10,000-item CSV, 32 connections${served}`, 'req/s', (side) => cachedLoad(side, false), before, now);
  await figure(`304 revalidations, 32 connections${served}`, 'req/s', (side) => cachedLoad(side, true), before, now);
  // Publication as a repricer runs it: the built CLI on an NDJSON file, into a fresh database
  // (so the guard has no predecessor to compare with), the whole process timed.
  const items = join(work, 'items.ndjson');
  writeFileSync(items, Array.from({ length: PUBLISH_COUNT }, (_, i) => JSON.stringify(rawItem(i))).join('\n') + '\n');
  let publication = 0;
  /** The side's built CLI on a new database file of `name` in which store `p` exists. */
  const freshCli = (side: Side, name: string) => {
    const env = { ...process.env, DATABASE_URL: `sqlite:${join(work, name)}` };
    const cli = (...cliArgs: string[]) => {
      const result = spawnSync(process.execPath, [side.entry, ...cliArgs], { cwd: side.tree, env, encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`${side.name}: ${cliArgs.join(' ')}: ${result.stderr}`);
    };
    cli('migrate');
    cli('store', 'create', '--id', 'p', '--name', 'P');
    return cli;
  };
  await figure(
    `publishing ${PUBLISH_COUNT.toLocaleString('en-US')} items with the built CLI (NDJSON file, whole process), SQLite`,
    'items/s',
    async (side) => {
      const cli = freshCli(side, `publish-${side.name}-${publication++}.db`);
      const started = performance.now();
      cli('publish', '--store', 'p', items);
      return PUBLISH_COUNT / ((performance.now() - started) / 1000);
    },
    before,
    now,
  );
  // The same list again with 1 % changed (0.8 % prices, 0.1 % removed, 0.1 % new), over the first:
  // the guard compares the two (and, since the changes feed, records what changed); only the
  // second publication is timed.
  const changed = join(work, 'changed.ndjson');
  writeFileSync(changed, Array.from({ length: PUBLISH_COUNT }, (_, i) => {
    const raw = rawItem(i >= PUBLISH_COUNT - PUBLISH_COUNT / 1000 ? i + PUBLISH_COUNT : i);
    if (i % 125 === 1) raw.price = (Number(raw.price) + 1).toFixed(2);
    return JSON.stringify(raw);
  }).join('\n') + '\n');
  await figure(
    `publishing ${PUBLISH_COUNT.toLocaleString('en-US')} items, 1 % changed, over the previous list with the built CLI, SQLite`,
    'items/s',
    async (side) => {
      const cli = freshCli(side, `republish-${side.name}-${publication++}.db`);
      cli('publish', '--store', 'p', items);
      const started = performance.now();
      cli('publish', '--store', 'p', changed);
      return PUBLISH_COUNT / ((performance.now() - started) / 1000);
    },
    before,
    now,
  );
} finally {
  await databases.dropAll();
  for (const name of ['before', 'now']) spawnSync('git', ['worktree', 'remove', '--force', join(work, name)], { cwd: ROOT, stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
}
