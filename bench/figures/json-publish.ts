/*
 * Issue #18, goal 2: publishing 1M items as a JSON array, end to end (readSource +
 * publishPriceList into a fresh SQLite database), against the same items as NDJSON through the
 * same path (goal ≥ 0.95×: the JSON reader keeps up) and against `sqlite3 .import` of the same
 * rows, normalized as the store keeps them, as CSV (goal ≥ 1.0×); and the JSON publication's
 * peak RSS over its process's RSS before it began (goal ≤ +250 MB).
 *
 *   node --import tsx bench/figures/json-publish.ts [--items 1000000] [--rounds 5] [--shape rich|lean] [--quick]
 *        [--formats json,ndjson[,items,csv]]
 *
 * --formats adds the other inputs a store may publish, the same items each time: `{"items": […]}`
 * and CSV (competitors and attributes as JSON text in their columns), each ÷ sqlite3 .import and
 * with its peak RSS growth (goal ≤ +250 MB in every input format).
 *
 * Items: bench-data.ts richItem (categories, competitors, attributes, Cyrillic; ~900 bytes of
 * JSON) or rawItem (~140 bytes). Each publication runs in a child process, so its peak RSS is
 * its own; a round runs the three once, the first rotating each round.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync, type WriteStream } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { normalizeItem } from '../../src/domain/item-validation.js';
import { readSource, type SourceFormat } from '../../src/domain/publication-source.js';
import { publishPriceList } from '../../src/domain/publishing.js';
import { openDatabase } from '../../src/store/factory.js';
import { extraJson } from '../../src/store/item-row.js';
import { rawItem, richItem } from '../bench-data.js';
import { emitResult, median, roundRatios } from '../lib/bench-result.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    items: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    shape: { type: 'string', default: 'rich' },
    quick: { type: 'boolean', default: false },
    child: { type: 'boolean', default: false },
    formats: { type: 'string', default: 'json,ndjson' },
  },
});

interface Run { seconds: number; rssGrowthMiB: number }

/** Child: publishes `file` as `format` into a fresh SQLite database at `path`. */
async function publishOnce(file: string, format: SourceFormat, path: string, expected: number): Promise<Run> {
  const db = await openDatabase(`sqlite:${path}`);
  await db.migrate();
  await db.stores.create({ id: 'bench', name: 'Bench', currency: 'RUB', url: null, company: null });
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const list = await publishPriceList(db, 'bench', readSource(createReadStream(file), format));
  const seconds = (performance.now() - started) / 1000;
  await db.close();
  if (list.item_count !== expected) throw new Error(`published ${list.item_count} items, expected ${expected}`);
  return { seconds, rssGrowthMiB: (process.resourceUsage().maxRSS * 1024 - rssBefore) / 2 ** 20 };
}

function publishInChild(file: string, format: SourceFormat, path: string, count: number): Run {
  const child = spawnSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--child', file, format, path, String(count)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.status !== 0) throw new Error(`publishing ${format} failed`);
  rmSync(path, { force: true });
  return JSON.parse(child.stdout) as Run;
}

/** The shape of price_items in SQLite (src/store/sqlite/schema.ts), as bench/publish.ts makes it for its reference. */
const REF_TABLE = `CREATE TABLE ref_items (
  price_list_id INTEGER NOT NULL, seq integer NOT NULL, offer_id text NOT NULL, name text NOT NULL, price INTEGER NOT NULL,
  old_price INTEGER, currency text NOT NULL, available INTEGER NOT NULL, quantity INTEGER, url text, extra text,
  PRIMARY KEY (price_list_id, seq));
  CREATE UNIQUE INDEX ref_items_offer ON ref_items(price_list_id, offer_id);`;

/** `sqlite3 .import` of the CSV into a fresh database with the same table, indexes and pragmas as SqliteStore. */
function sqliteImport(csv: string, path: string): number {
  execFileSync('sqlite3', [path, 'PRAGMA journal_mode = WAL;', REF_TABLE], { stdio: 'ignore' });
  const started = performance.now();
  execFileSync('sqlite3', [path, 'PRAGMA synchronous = NORMAL;', '.mode csv', `.import ${csv} ref_items`]);
  const seconds = (performance.now() - started) / 1000;
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  return seconds;
}

/** Every input a publication may come in: the bench's own names → readSource's format. */
const INPUTS = { json: 'json', ndjson: 'ndjson', items: 'json', csv: 'csv' } as const satisfies Record<string, SourceFormat>;
type Input = keyof typeof INPUTS;

/** A publication's CSV columns (publication-source.ts CSV_FIELDS): competitors and attributes as JSON text. */
const CSV_COLUMNS = ['offer_id', 'name', 'price', 'old_price', 'quantity', 'url', 'picture', 'vendor', 'vendor_code', 'barcode', 'description', 'category', 'competitors', 'attributes'];

/** The same items as a JSON array, `{"items"}`, NDJSON and CSV, and normalized (as the store keeps them) as CSV for sqlite3. */
async function generate(dir: string, count: number, make: (i: number) => Record<string, unknown>): Promise<Record<Input | 'reference', string>> {
  const files = { json: join(dir, 'items.json'), items: join(dir, 'items-object.json'), ndjson: join(dir, 'items.ndjson'), csv: join(dir, 'items-input.csv'), reference: join(dir, 'items.csv') };
  const out = Object.fromEntries(Object.entries(files).map(([name, file]) => [name, createWriteStream(file)])) as Record<keyof typeof files, WriteStream>;
  const q = (v: string | number | null) => (v === null ? '' : typeof v === 'number' ? String(v) : `"${v.replaceAll('"', '""')}"`);
  const field = (v: unknown) => (v === undefined || v === null ? '' : q(typeof v === 'object' ? JSON.stringify(v) : String(v)));
  out.json.write('[\n');
  out.items.write('{"source": "bench", "items": [\n');
  out.csv.write(`${CSV_COLUMNS.join(',')}\n`);
  for (let i = 0; i < count; i++) {
    const raw = make(i);
    const { item } = normalizeItem(raw, 'RUB');
    if (!item) throw new Error(`generated a bad row ${i}`);
    const line = JSON.stringify(raw);
    out.json.write(i + 1 < count ? `${line},\n` : `${line}\n]\n`);
    out.items.write(i + 1 < count ? `${line},\n` : `${line}\n], "count": ${count}}\n`);
    out.ndjson.write(`${line}\n`);
    out.csv.write(`${CSV_COLUMNS.map((column) => field(raw[column])).join(',')}\n`);
    out.reference.write(`1,${i},${q(item.offer_id)},${q(item.name)},${item.price},${q(item.old_price)},${q(item.currency)},${item.available ? 1 : 0},${q(item.quantity)},${q(item.url)},${q(extraJson(item))}\n`);
    for (const stream of Object.values(out)) if (stream.writableNeedDrain) await drain(stream);
  }
  await Promise.all(Object.values(out).map((stream) => new Promise<void>((resolve, reject) => stream.once('error', reject).end(() => resolve()))));
  return files;
}

const drain = (stream: WriteStream) => new Promise<void>((resolve) => stream.once('drain', () => resolve()));

async function main(): Promise<void> {
  const count = Number(args.items ?? (args.quick ? 100_000 : 1_000_000));
  const rounds = Math.max(5, Number(args.rounds));
  const shape = args.shape === 'lean' ? 'lean' : 'rich';
  const dir = mkdtempSync(join(tmpdir(), 'price-export-json-publish-'));
  try {
    const inputs = args.formats.split(',').map((name) => name.trim()) as Input[];
    for (const input of ['json', 'ndjson'] as const) if (!inputs.includes(input)) inputs.push(input);
    if (inputs.some((input) => !(input in INPUTS))) throw new Error(`--formats: one of ${Object.keys(INPUTS).join(', ')}`);
    const files = await generate(dir, count, shape === 'rich' ? richItem : rawItem);
    const mb = (file: string) => `${(statSync(file).size / 1e6).toFixed(0)} MB`;
    const sizes = `${count.toLocaleString('en-US')} ${shape} items: ${inputs.map((input) => `${input} ${mb(files[input])}`).join(', ')}, reference CSV ${mb(files.reference)}`;
    console.log(`${sizes}; load average before ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
    const runs = Object.fromEntries(inputs.map((input) => [input, [] as Run[]])) as Record<Input, Run[]>;
    const sqlite: number[] = [];
    const steps = [
      ...inputs.map((input) => () => runs[input].push(publishInChild(files[input], INPUTS[input], join(dir, `${input}.db`), count))),
      () => sqlite.push(sqliteImport(files.reference, join(dir, 'reference.db'))),
    ];
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < steps.length; k++) steps[(k + round) % steps.length]();
      const published = inputs.map((input) => `${input} ${runs[input][round].seconds.toFixed(2)} s (+${runs[input][round].rssGrowthMiB.toFixed(0)} MiB)`);
      console.log(`round ${round + 1}: ${published.join(', ')}, sqlite3 .import ${sqlite[round].toFixed(2)} s; load ${loadavg()[0].toFixed(2)}`);
    }
    const rate = (seconds: number) => Math.round(count / seconds);
    const json = runs.json;
    const jsonRates = json.map((run) => rate(run.seconds));
    const load = `load average after ${loadavg().map((n) => n.toFixed(2)).join(' ')} on a machine shared with other work`;
    const byNdjson = { figure: `publishing ${count.toLocaleString('en-US')} ${shape} items as a JSON array ÷ as NDJSON (SQLite)`, unit: 'items/s', higherIsBetter: true, ours: jsonRates, reference: runs.ndjson.map((run) => rate(run.seconds)), referenceName: 'the same items as NDJSON, the same path', goal: '≥ 0.95×' };
    emitResult({ ...byNdjson, met: median(roundRatios(byNdjson)) >= 0.95, notes: `${sizes}; ${load}` });
    const NAMES: Record<Input, string> = { json: 'a JSON array', ndjson: 'NDJSON', items: '{"items": […]}', csv: 'CSV' };
    for (const input of inputs) {
      const bySqlite = { figure: `publishing ${count.toLocaleString('en-US')} ${shape} items as ${NAMES[input]} ÷ sqlite3 .import`, unit: 'items/s', higherIsBetter: true, ours: runs[input].map((run) => rate(run.seconds)), reference: sqlite.map(rate), referenceName: 'sqlite3 .import of the same rows, normalized, as CSV, into a table of the same shape and indexes', goal: '≥ 1.0×' };
      emitResult({ ...bySqlite, met: median(roundRatios(bySqlite)) >= 1, notes: load });
      const growth = runs[input].map((run) => Math.round(run.rssGrowthMiB));
      emitResult({ figure: `peak RSS growth publishing ${count.toLocaleString('en-US')} ${shape} items as ${NAMES[input]}`, unit: 'MiB', higherIsBetter: false, ours: growth, reference: [], referenceName: '', goal: '≤ +250 MB', met: median(growth) * 1.048576 <= 250 });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args.child) {
  const [file, format, path, count] = positionals as [string, SourceFormat, string, string];
  process.stdout.write(JSON.stringify(await publishOnce(file, format, path, Number(count))));
  process.exit(0);
}
await main();
