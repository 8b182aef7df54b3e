/*
 * Publishing speed: N items (default 1,000,000) as NDJSON through readSource + publishPriceList
 * into a fresh SQLite and a fresh PostgreSQL database, against each database's own bulk
 * loader writing the same rows (already normalized, as the store keeps them) as CSV into a
 * table of the same shape and indexes: `sqlite3 .import` and `psql \copy`.
 *
 *   node --import tsx bench/publish.ts [items] [postgres://admin-url]
 *
 * Each publication runs in a child process, so its peak RSS is its own. The PostgreSQL URL
 * defaults to PRICE_EXPORT_TEST_PG_URL, then postgres://postgres@127.0.0.1:5432/test.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { normalizeItem } from '../src/domain/item-validation.js';
import { readSource } from '../src/domain/publication-source.js';
import { publishPriceList, readPublication } from '../src/domain/publishing.js';
import { openDatabase } from '../src/store/factory.js';
import { extraJson } from '../src/store/item-row.js';

interface RunResult { seconds: number; maxRssMiB: number }

const [, , first, second, third, fourth] = process.argv;

const CHILD = first === '--child';
const COUNT = Number((CHILD ? fourth : first) ?? 1_000_000);
const PG_ADMIN = CHILD ? '' : second ?? process.env.PRICE_EXPORT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = CHILD ? '' : mkdtempSync(join(tmpdir(), 'price-export-bench-'));
const ndjson = join(dir, 'items.ndjson');
const csv = join(dir, 'items.csv');

/** The shape of price_items in both dialects (see src/store/*\/schema.ts), for the references. */
const REF_TABLE = (money: string, bool: string) => `CREATE TABLE ref_items (
  price_list_id ${money} NOT NULL, seq integer NOT NULL, offer_id text NOT NULL, name text NOT NULL, price ${money} NOT NULL,
  old_price ${money}, currency text NOT NULL, available ${bool} NOT NULL, quantity ${money}, url text, extra text,
  PRIMARY KEY (price_list_id, seq));
  CREATE UNIQUE INDEX ref_items_offer ON ref_items(price_list_id, offer_id);`;

function report(label: string, run: RunResult): void {
  const rate = Math.round(COUNT / run.seconds).toLocaleString('en-US');
  const rss = Number.isNaN(run.maxRssMiB) ? '' : `, peak RSS ${run.maxRssMiB.toFixed(0)} MiB`;
  console.log(`${label.padEnd(30)} ${run.seconds.toFixed(2).padStart(7)} s  ${rate.padStart(9)} items/s${rss}`);
}

async function publishOnce(file: string, url: string, expected: number): Promise<RunResult> {
  if (url === 'none') return readOnly(file, expected);
  const db = await openDatabase(url);
  await db.migrate();
  await db.stores.create({ id: 'bench', name: 'Bench', currency: 'RUB', url: null, company: null });
  const start = process.hrtime.bigint();
  const list = await publishPriceList(db, 'bench', readPublication(db, createReadStream(file), 'ndjson'));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await db.close();
  if (list.item_count !== expected) throw new Error(`published ${list.item_count} items, expected ${expected}`);
  return { seconds, maxRssMiB: process.resourceUsage().maxRSS / 1024 };
}

/** The floor set by the domain alone: read and validate every row, store nothing. */
async function readOnly(file: string, expected: number): Promise<RunResult> {
  const start = process.hrtime.bigint();
  let count = 0;
  for await (const row of readSource(createReadStream(file), 'ndjson')) {
    const { item } = normalizeItem(row.raw, 'RUB', row.text);
    if (!item) continue;
    extraJson(item); // both stores serialize this per item, so it belongs to the floor
    count++;
  }
  if (count !== expected) throw new Error(`read ${count} items, expected ${expected}`);
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, maxRssMiB: process.resourceUsage().maxRSS / 1024 };
}

function runChild(file: string, url: string): RunResult {
  const child = spawnSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--child', file, url, String(COUNT)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  if (child.status !== 0) throw new Error(`publishing into ${url.split(':')[0]} failed`);
  return JSON.parse(child.stdout) as RunResult;
}

function timeSqliteImport(path: string): RunResult | null {
  try {
    execFileSync('sqlite3', ['-version'], { stdio: 'ignore' });
  } catch {
    console.log('sqlite3 CLI missing (apt-get install -y sqlite3): no SQLite reference');
    return null;
  }
  // Same pragmas as SqliteStore, so the reference writes the same way.
  execFileSync('sqlite3', [path, 'PRAGMA journal_mode = WAL;', REF_TABLE('INTEGER', 'INTEGER')], { stdio: 'ignore' });
  return timed(() => execFileSync('sqlite3', [path, 'PRAGMA synchronous = NORMAL;', '.mode csv', `.import ${csv} ref_items`]));
}

function timePsqlCopy(url: string): RunResult {
  execFileSync('psql', [url, '-q', '-v', 'ON_ERROR_STOP=1', '-c', REF_TABLE('bigint', 'boolean')]);
  return timed(() => execFileSync('psql', [url, '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy ref_items FROM '${csv}' WITH (FORMAT csv)`]));
}

function timed(work: () => void): RunResult {
  const start = process.hrtime.bigint();
  work();
  return { seconds: Number(process.hrtime.bigint() - start) / 1e9, maxRssMiB: NaN };
}

async function createPgDatabase(admin: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `pe_bench_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

const NAMES = ['Смартфон «Галактика» 128 ГБ', 'Case, black', 'Cable 2" USB-C', 'Холодильник; 300 л', 'Чехол 📱 для телефона', 'Plain item'];
const CATEGORIES = Array.from({ length: 40 }, (_, i) => `Раздел ${i % 8} / Подраздел ${i}`);

/** A catalogue-like row: most fields filled some of the time, offer ids in no particular order. */
function rawItem(i: number): Record<string, unknown> {
  const price = 100 + ((i * 7919) % 9_999_900);
  const row: Record<string, unknown> = {
    // 7919 is prime to COUNT's factors (2, 5), so this is a permutation: unique, unordered ids.
    offer_id: `SKU-${(i * 7919) % COUNT}`,
    name: `${NAMES[i % NAMES.length]} ${i}`,
    price: (price / 100).toFixed(2),
  };
  if (i % 3 === 0) row.old_price = ((price + 1000) / 100).toFixed(2);
  if (i % 2 === 0) row.quantity = i % 50;
  if (i % 4 === 0) row.url = `https://demo-shop.example/p/${i}`;
  if (i % 2 === 1) row.category = CATEGORIES[i % CATEGORIES.length];
  if (i % 5 === 0) row.vendor = 'Vendor';
  if (i % 10 === 0) row.competitors = [{ name: 'shop-b.example', price: (price + 50) / 100 }];
  if (i % 7 === 0) row.attributes = { 'цвет': 'чёрный', size: 'M' };
  return row;
}

/** The NDJSON to publish, and the same rows normalized (as the store keeps them) as CSV for the references. */
async function generate(count: number): Promise<void> {
  const json = createWriteStream(ndjson);
  const table = createWriteStream(csv);
  const q = (v: string | number | null) => (v === null ? '' : typeof v === 'number' ? String(v) : `"${v.replaceAll('"', '""')}"`);
  for (let i = 0; i < count; i++) {
    const raw = rawItem(i);
    const { item } = normalizeItem(raw, 'RUB');
    if (!item) throw new Error(`generated a bad row ${i}`);
    json.write(`${JSON.stringify(raw)}\n`);
    table.write(`1,${i},${q(item.offer_id)},${q(item.name)},${item.price},${q(item.old_price)},${q(item.currency)},${item.available ? 1 : 0},${q(item.quantity)},${q(item.url)},${q(extraJson(item))}\n`);
    // Checked after both writes: awaiting one stream's 'drain' may let the other's pass unseen.
    if (json.writableNeedDrain) await drain(json);
    if (table.writableNeedDrain) await drain(table);
  }
  await Promise.all([close(json), close(table)]);
}

const drain = (stream: WriteStream) => new Promise<void>((resolve) => stream.once('drain', () => resolve()));
const close = (stream: WriteStream) => new Promise<void>((resolve, reject) => stream.once('error', reject).end(() => resolve()));

async function main(): Promise<void> {
  try {
    console.log(`generating ${COUNT.toLocaleString('en-US')} items…`);
    await generate(COUNT);

    report('read + validate, no database', runChild(ndjson, 'none'));

    const sqliteDb = join(dir, 'publish.db');
    const sqlite = runChild(ndjson, `sqlite:${sqliteDb}`);
    report('publish → SQLite', sqlite);

    const sqliteRef = timeSqliteImport(join(dir, 'reference.db'));
    if (sqliteRef) report('sqlite3 .import (reference)', sqliteRef);

    const { url: pgUrl, drop } = await createPgDatabase(PG_ADMIN);
    try {
      const postgres = runChild(ndjson, pgUrl);
      report('publish → PostgreSQL', postgres);
      const pgRef = timePsqlCopy(pgUrl);
      report('psql \\copy (reference)', pgRef);
      console.log();
      if (sqliteRef) console.log(`SQLite:     publishing runs at ${(sqliteRef.seconds / sqlite.seconds).toFixed(2)}× the speed of sqlite3 .import`);
      console.log(`PostgreSQL: publishing runs at ${(pgRef.seconds / postgres.seconds).toFixed(2)}× the speed of psql \\copy`);
    } finally {
      await drop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (CHILD) {
  // Child: publish file `second` into database `third`, expecting `fourth` items; report time and peak memory.
  process.stdout.write(JSON.stringify(await publishOnce(second, third, COUNT)));
  process.exit(0);
}
await main();
