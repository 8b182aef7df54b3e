/*
 * Issue #18, goal 2: publishing 1M items as a JSON array, end to end (readSource +
 * publishPriceList into a fresh database), against the same items as NDJSON through the
 * same path (goal ≥ 0.95×: the JSON reader keeps up) and against the database's own bulk loader
 * writing the same rows, normalized as the store keeps them, as CSV into a table of the same
 * shape and indexes — `sqlite3 .import`, `psql \copy` (goal ≥ 1.0×); and the publication's
 * peak RSS over its process's RSS before it began (goal ≤ +250 MB).
 *
 *   node --import tsx bench/figures/json-publish.ts [--items 1000000] [--rounds 5] [--warm-up 1] [--shape rich|lean] [--quick]
 *        [--formats json,ndjson[,items,csv]] [--dialects sqlite,postgresql] [--database-url postgres://admin-url]
 *
 * Before the measured rounds, --warm-up rounds (1 by default) run every step uncounted: the first
 * publication of round 1 took 1.3–1.5× the others in most runs of 2026-11-27 (bench/RESULTS.md,
 * "late evening"; on PostgreSQL likely the WAL segments an idle server had trimmed and makes anew,
 * zero-filled; on SQLite the cause was not found), and rotation put that cost on one input's
 * round 1, never on the reference's.
 *
 * Both dialects by default. PostgreSQL's publications go into a fresh database each time (made
 * through the admin URL: --database-url, else PRICE_EXPORT_TEST_PG_URL, else
 * postgres://postgres@127.0.0.1:5432/test), and `psql \copy` into a fresh one; each dialect's
 * rounds alternate its inputs and its reference.
 *
 * --formats adds the other inputs a store may publish, the same items each time: `{"items": […]}`
 * and CSV (competitors and attributes as JSON text in their columns), each ÷ the bulk loader and
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
import type { SourceFormat } from '../../src/domain/publication-source.js';
import { publishPriceList, readPublication } from '../../src/domain/publishing.js';
import { openDatabase } from '../../src/store/factory.js';
import { extraJson } from '../../src/store/item-row.js';
import { createEmptyDatabase } from '../../test/multi-instance/processes.js';
import { rawItem, richItem } from '../bench-data.js';
import { freshDatabase } from '../lib/fresh-databases.js';
import { emitResult, roundRatios, metInEveryRound } from '../lib/bench-result.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    items: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    'warm-up': { type: 'string', default: '1' },
    shape: { type: 'string', default: 'rich' },
    quick: { type: 'boolean', default: false },
    child: { type: 'boolean', default: false },
    formats: { type: 'string', default: 'json,ndjson' },
    dialects: { type: 'string', default: 'sqlite,postgresql' },
    'database-url': { type: 'string' },
  },
});

/** A publication's wall seconds, peak RSS growth, and the page faults its process took meanwhile (dear on some hosts: bench/RESULTS.md, "2026-12-02, morning"). */
interface Run { seconds: number; rssGrowthMiB: number; faults: number }

/** Child: publishes `file` as `format` into the fresh database at `url`. */
async function publishOnce(file: string, format: SourceFormat, url: string, expected: number): Promise<Run> {
  const db = await openDatabase(url);
  await db.migrate();
  await db.stores.create({ id: 'bench', name: 'Bench', currency: 'RUB', url: null, company: null });
  const rssBefore = process.memoryUsage().rss;
  const faultsBefore = process.resourceUsage().minorPageFault;
  const started = performance.now();
  const list = await publishPriceList(db, 'bench', readPublication(db, createReadStream(file), format));
  const seconds = (performance.now() - started) / 1000;
  const faults = process.resourceUsage().minorPageFault - faultsBefore;
  await db.close();
  if (list.item_count !== expected) throw new Error(`published ${list.item_count} items, expected ${expected}`);
  return { seconds, rssGrowthMiB: (process.resourceUsage().maxRSS * 1024 - rssBefore) / 2 ** 20, faults };
}

function publishInChild(file: string, format: SourceFormat, url: string, count: number): Run {
  const child = spawnSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--child', file, format, url, String(count)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.status !== 0) throw new Error(`publishing ${format} failed`);
  return JSON.parse(child.stdout) as Run;
}

/** The shape of price_items (src/store/*\/schema.ts), as bench/publish.ts makes it for its references. */
const REF_TABLE = (money: string, bool: string) => `CREATE TABLE ref_items (
  price_list_id ${money} NOT NULL, seq integer NOT NULL, offer_id text NOT NULL, name text NOT NULL, price ${money} NOT NULL,
  old_price ${money}, currency text NOT NULL, available ${bool} NOT NULL, quantity ${money}, url text, extra text,
  PRIMARY KEY (price_list_id, seq));
  CREATE UNIQUE INDEX ref_items_offer ON ref_items(price_list_id, offer_id);`;

/** `sqlite3 .import` of the CSV into a fresh database with the same table, indexes and pragmas as SqliteStore. */
function sqliteImport(csv: string, path: string): number {
  execFileSync('sqlite3', [path, 'PRAGMA journal_mode = WAL;', REF_TABLE('INTEGER', 'INTEGER')], { stdio: 'ignore' });
  const started = performance.now();
  execFileSync('sqlite3', [path, 'PRAGMA synchronous = NORMAL;', '.mode csv', `.import ${csv} ref_items`]);
  const seconds = (performance.now() - started) / 1000;
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  return seconds;
}

/** `psql \copy` of the CSV into a fresh database with the same table and indexes as PgStore. */
async function psqlCopy(csv: string, adminUrl: string): Promise<number> {
  const { url, drop } = await createEmptyDatabase(adminUrl);
  try {
    execFileSync('psql', [url, '-q', '-v', 'ON_ERROR_STOP=1', '-c', REF_TABLE('bigint', 'boolean')]);
    const started = performance.now();
    execFileSync('psql', [url, '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy ref_items FROM '${csv}' WITH (FORMAT csv)`]);
    return (performance.now() - started) / 1000;
  } finally {
    await drop();
  }
}

/** Publishes into a fresh database of the dialect, dropped afterwards. */
async function publishFresh(dialect: Dialect, file: string, format: SourceFormat, dir: string, count: number, adminUrl: string): Promise<Run> {
  const { url, drop } = await freshDatabase(dir, format, dialect === 'postgresql' ? adminUrl : undefined);
  try {
    return publishInChild(file, format, url, count);
  } finally {
    await drop();
  }
}

const DIALECTS = { sqlite: { label: 'SQLite', reference: 'sqlite3 .import' }, postgresql: { label: 'PostgreSQL', reference: 'psql \\copy' } } as const;
type Dialect = keyof typeof DIALECTS;

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
  const adminUrl = args['database-url'] ?? process.env.PRICE_EXPORT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dialects = args.dialects.split(',').map((name) => name.trim()) as Dialect[];
  if (dialects.some((dialect) => !(dialect in DIALECTS))) throw new Error(`--dialects: one or more of ${Object.keys(DIALECTS).join(', ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'price-export-json-publish-'));
  try {
    const inputs = args.formats.split(',').map((name) => name.trim()) as Input[];
    for (const input of ['json', 'ndjson'] as const) if (!inputs.includes(input)) inputs.push(input);
    if (inputs.some((input) => !(input in INPUTS))) throw new Error(`--formats: one of ${Object.keys(INPUTS).join(', ')}`);
    const files = await generate(dir, count, shape === 'rich' ? richItem : rawItem);
    // The ~3.7 GB just written go to disk before round 1, not during it: in three runs the
    // first publication of round 1 took ~25.7 s where the others took 18–21 s (bench/RESULTS.md,
    // "2026-11-27, evening").
    execFileSync('sync');
    const mb = (file: string) => `${(statSync(file).size / 1e6).toFixed(0)} MB`;
    const sizes = `${count.toLocaleString('en-US')} ${shape} items: ${inputs.map((input) => `${input} ${mb(files[input])}`).join(', ')}, reference CSV ${mb(files.reference)}`;
    console.log(`${sizes}; load average before ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
    for (const dialect of dialects) await measureDialect(dialect, { count, rounds, shape, inputs, files, dir, adminUrl, sizes });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Setup {
  count: number;
  rounds: number;
  shape: string;
  inputs: Input[];
  files: Record<Input | 'reference', string>;
  dir: string;
  adminUrl: string;
  sizes: string;
}

/** One dialect's rounds (each its inputs and its reference, the first rotating each round) and figures. */
async function measureDialect(dialect: Dialect, { count, rounds, shape, inputs, files, dir, adminUrl, sizes }: Setup): Promise<void> {
  const { label, reference: referenceName } = DIALECTS[dialect];
  const runs = Object.fromEntries(inputs.map((input) => [input, [] as Run[]])) as Record<Input, Run[]>;
  const reference: number[] = [];
  const steps = [
    ...inputs.map((input) => async () => runs[input].push(await publishFresh(dialect, files[input], INPUTS[input], dir, count, adminUrl))),
    async () => reference.push(dialect === 'sqlite' ? sqliteImport(files.reference, join(dir, 'reference.db')) : await psqlCopy(files.reference, adminUrl)),
  ];
  for (let round = 0; round < Number(args['warm-up']); round++) {
    for (const step of steps) await step();
    const published = inputs.map((input) => `${input} ${runs[input].pop()!.seconds.toFixed(2)} s`);
    console.log(`${label} warm-up round ${round + 1} (not counted): ${published.join(', ')}, ${referenceName} ${reference.pop()!.toFixed(2)} s`);
  }
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < steps.length; k++) await steps[(k + round) % steps.length]();
    const published = inputs.map((input) => `${input} ${runs[input][round].seconds.toFixed(2)} s (+${runs[input][round].rssGrowthMiB.toFixed(0)} MiB, ${runs[input][round].faults} page faults)`);
    console.log(`${label} round ${round + 1}: ${published.join(', ')}, ${referenceName} ${reference[round].toFixed(2)} s; load ${loadavg()[0].toFixed(2)}`);
  }
  const rate = (seconds: number) => Math.round(count / seconds);
  const load = `load average after ${loadavg().map((n) => n.toFixed(2)).join(' ')} on a machine shared with other work`;
  const byNdjson = { figure: `publishing ${count.toLocaleString('en-US')} ${shape} items as a JSON array ÷ as NDJSON (${label})`, unit: 'items/s', higherIsBetter: true, ours: runs.json.map((run) => rate(run.seconds)), reference: runs.ndjson.map((run) => rate(run.seconds)), referenceName: 'the same items as NDJSON, the same path', goal: '≥ 0.95×' };
  emitResult({ ...byNdjson, met: metInEveryRound(roundRatios(byNdjson), 0.95), notes: `${sizes}; ${load}` });
  const NAMES: Record<Input, string> = { json: 'a JSON array', ndjson: 'NDJSON', items: '{"items": […]}', csv: 'CSV' };
  for (const input of inputs) {
    const byReference = { figure: `publishing ${count.toLocaleString('en-US')} ${shape} items as ${NAMES[input]} ÷ ${referenceName} (${label})`, unit: 'items/s', higherIsBetter: true, ours: runs[input].map((run) => rate(run.seconds)), reference: reference.map(rate), referenceName: `${referenceName} of the same rows, normalized, as CSV, into a table of the same shape and indexes`, goal: '≥ 1.0×' };
    emitResult({ ...byReference, met: metInEveryRound(roundRatios(byReference), 1), notes: load });
    const growth = runs[input].map((run) => Math.round(run.rssGrowthMiB));
    emitResult({ figure: `peak RSS growth publishing ${count.toLocaleString('en-US')} ${shape} items as ${NAMES[input]} (${label})`, unit: 'MiB', higherIsBetter: false, ours: growth, reference: [], referenceName: '', goal: '≤ +250 MB', met: metInEveryRound(growth.map((mib) => mib * 1.048576), 250, false) });
  }
}

if (args.child) {
  const [file, format, url, count] = positionals as [string, SourceFormat, string, string];
  process.stdout.write(JSON.stringify(await publishOnce(file, format, url, Number(count))));
  process.exit(0);
}
await main();
