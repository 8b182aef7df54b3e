/*
 * Issue #18, goal 2: which streaming CSV reader keeps up. Each candidate reads the same rows from
 * a file, through the same UTF-8 check the service runs (text-decoding.ts), and hands them one
 * at a time (as objects keyed by the header) to an async loop, as readSource does; nothing is
 * stored. Before the timed rounds, each candidate's rows are hashed once (every field of every
 * row): "same rows" says whether they are csv-parse's.
 *
 *   node --import tsx bench/csv-parsers.ts [--items 200000] [--rounds 5] [--shape rich,lean] [--only a,b]
 *
 * Candidates:
 *   csv-parse     as src/domain/publication-source.ts read CSV before csv-records.ts (bom, info,
 *                 strict column count, skip_empty_lines)
 *   csv-parser    mafintosh's csv-parser, strict: true
 *   papaparse     Papa.parse on the Node stream, header: true, skipEmptyLines
 *   udsv          uDSV's incremental chunk API (its README's Node stream recipe), string objects
 *   reader        src/domain/csv-records.ts through readSource 'csv' (the service's path)
 * and the reference, the same items as NDJSON through readSource 'ndjson'.
 *
 * Shapes: "rich" (bench-data.ts richItem: categories, 2–4 competitors and 4–6 attributes as
 * JSON in their cells, Cyrillic, ~840 bytes a row) and "lean" (rawItem, ~110 bytes).
 * Each run is a child process; a round runs every candidate once, the first one rotating each
 * round, and each figure is the median of the rounds with min–max.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline, type Duplex, type Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { parse as csvParse } from 'csv-parse';
import csvParser from 'csv-parser';
import Papa from 'papaparse';
import { inferSchema, initParser } from 'udsv';
import { readSource } from '../src/domain/publication-source.js';
import { decodedAsUtf8 } from '../src/domain/text-decoding.js';
import { rawItem, richItem } from './bench-data.js';
import { spread } from './lib/bench-result.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    items: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '5' },
    shape: { type: 'string', default: 'rich,lean' },
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    child: { type: 'boolean', default: false },
    hash: { type: 'boolean', default: false },
  },
});

type Row = Record<string, string>;
interface Run { seconds: number; rows: number; hash: string }

function chain(input: Readable, ...stages: Duplex[]): Duplex {
  return pipeline([input, ...stages] as unknown as [Readable, Duplex], () => undefined) as unknown as Duplex;
}
const checked = (input: Readable) => chain(input, decodedAsUtf8('utf-8'));

/** Rows a callback-driven parser hands over, as an async iterable (ended, or failed, by its stream). */
async function* pushed(start: (row: (r: Row) => void, done: (error?: Error) => void) => void): AsyncIterable<Row> {
  let rows: Row[] = [];
  let finished = false;
  let failure: Error | undefined;
  let wake: (() => void) | null = null;
  start(
    (r) => {
      rows.push(r);
      wake?.();
    },
    (error) => {
      finished = true;
      failure = error;
      wake?.();
    },
  );
  for (;;) {
    if (rows.length > 0) {
      const taken = rows;
      rows = [];
      yield* taken;
      continue;
    }
    if (failure) throw failure;
    if (finished) return;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
  }
}

const CANDIDATES: Record<string, (input: Readable) => AsyncIterable<Row>> = {
  async *'csv-parse'(input) {
    const parser = chain(checked(input), csvParse({ columns: true, bom: true, info: true, relax_column_count: false, skip_empty_lines: true }));
    for await (const { record } of parser as AsyncIterable<{ record: Row }>) yield record;
  },
  'csv-parser': (input) => pushed((row, done) => checked(input).pipe(csvParser({ strict: true })).on('data', row).on('end', () => done()).on('error', done)),
  // Its types offer a Node stream only through NODE_STREAM_INPUT; its docs and code take one as the input too.
  papaparse: (input) =>
    pushed((row, done) => (Papa.parse as unknown as (input: Readable, config: Papa.ParseConfig<Row>) => void)(checked(input), { header: true, skipEmptyLines: true, step: (result) => row(result.data), complete: () => done(), error: (error: Error) => done(error) } as Papa.ParseConfig<Row>)),
  async *udsv(input) {
    let parser: ReturnType<typeof initParser> | null = null;
    let rows: Row[] = [];
    for await (const chunk of checked(input) as AsyncIterable<Buffer>) {
      const text = chunk.toString();
      parser ??= initParser(inferSchema(text));
      parser.chunk(text, parser.stringObjs, (r: Row) => void rows.push(r));
      yield* rows;
      rows = [];
    }
    parser?.end();
  },
  async *reader(input) {
    for await (const row of readSource(input, 'csv')) yield row.raw as Row;
  },
  async *ndjson(input) {
    for await (const row of readSource(input, 'ndjson')) yield row.raw as Row;
  },
};

/**
 * Child: read `file` with `candidate`, touching every row (a field's length) as validation would;
 * with `hash`, an untimed check instead: a hash of every field of every row.
 */
async function childRun(candidate: string, file: string, hash: boolean): Promise<Run> {
  const digest = createHash('sha1');
  const started = performance.now();
  let rows = 0;
  let touched = 0;
  for await (const row of CANDIDATES[candidate](createReadStream(file))) {
    rows++;
    touched += row.offer_id.length;
    if (hash) for (const column of COLUMNS) digest.update(`${row[column] ?? ''}\u0000`);
  }
  if (touched === 0) throw new Error('no rows touched');
  return { seconds: (performance.now() - started) / 1000, rows, hash: hash ? digest.digest('hex').slice(0, 12) : '' };
}

function runChild(candidate: string, file: string, expected: number, hash = false): Run {
  const child = spawnSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--child', candidate, file, ...(hash ? ['--hash'] : [])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.status !== 0) throw new Error(`${candidate} failed`);
  const run = JSON.parse(child.stdout) as Run;
  if (run.rows !== expected) throw new Error(`${candidate}: read ${run.rows} rows, expected ${expected}`);
  return run;
}

const COLUMNS = ['offer_id', 'name', 'price', 'old_price', 'quantity', 'url', 'picture', 'vendor', 'vendor_code', 'barcode', 'description', 'category', 'competitors', 'attributes'];

/** The items as CSV (every text quoted, lists and objects as JSON in their cells, as a repricer writes them) and as NDJSON. */
async function writeFiles(dir: string, count: number, make: (i: number) => Record<string, unknown>): Promise<{ csv: string; ndjson: string; csvBytes: number }> {
  const files = { csv: join(dir, 'items.csv'), ndjson: join(dir, 'items.ndjson') };
  const out = { csv: createWriteStream(files.csv), ndjson: createWriteStream(files.ndjson) };
  let csvBytes = 0;
  const write = async (to: 'csv' | 'ndjson', text: string) => {
    if (to === 'csv') csvBytes += Buffer.byteLength(text);
    if (!out[to].write(text)) await new Promise<void>((resolve) => out[to].once('drain', () => resolve()));
  };
  const cell = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'number' ? String(v) : `"${(typeof v === 'object' ? JSON.stringify(v) : String(v)).replaceAll('"', '""')}"`);
  await write('csv', `${COLUMNS.join(',')}\n`);
  for (let i = 0; i < count; i++) {
    const item = make(i);
    await write('csv', `${COLUMNS.map((column) => cell(item[column])).join(',')}\n`);
    await write('ndjson', `${JSON.stringify(item)}\n`);
  }
  await Promise.all(Object.values(out).map((stream: WriteStream) => new Promise<void>((resolve) => stream.end(() => resolve()))));
  return { ...files, csvBytes };
}

async function main(): Promise<void> {
  const count = args.quick ? 30_000 : Number(args.items);
  const rounds = Math.max(5, Number(args.rounds));
  const only = args.only ? new Set(args.only.split(',')) : null;
  const candidates = Object.keys(CANDIDATES).filter((name) => only === null || only.has(name) || name === 'csv-parse' || name === 'ndjson');
  const dir = mkdtempSync(join(tmpdir(), 'price-export-csv-parsers-'));
  console.log(`${count.toLocaleString('en-US')} rows per file, ${rounds} rounds; ${cpus().length} CPUs (${cpus()[0]?.model}), Node ${process.version}; load average before ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  try {
    for (const shape of args.shape.split(',')) {
      const files = await writeFiles(dir, count, shape === 'rich' ? richItem : rawItem);
      console.log(`\n${shape} rows: CSV ${(files.csvBytes / 2 ** 20).toFixed(0)} MiB (${Math.round(files.csvBytes / count)} bytes/row)`);
      const fileOf = (name: string) => (name === 'ndjson' ? files.ndjson : files.csv);
      // Untimed: each candidate's rows hashed once, to compare with csv-parse's.
      const hashes = new Map(candidates.filter((name) => name !== 'ndjson').map((name) => [name, runChild(name, fileOf(name), count, true).hash]));
      const runs = new Map<string, Run[]>();
      for (let round = 0; round < rounds; round++) {
        for (let k = 0; k < candidates.length; k++) {
          const name = candidates[(k + round) % candidates.length];
          runs.set(name, [...(runs.get(name) ?? []), runChild(name, fileOf(name), count)]);
        }
        process.stderr.write(`  round ${round + 1}/${rounds} done, load ${loadavg()[0].toFixed(2)}\n`);
      }
      const rate = (name: string) => spread(runs.get(name)!.map((run) => count / run.seconds));
      const reference = rate('csv-parse').median;
      const ndjson = rate('ndjson').median;
      const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
      console.log(`${'candidate'.padEnd(12)} ${'rows/s median (min–max)'.padEnd(30)} ${'µs/row'.padStart(7)} ${'÷ csv-parse'.padStart(12)} ${'÷ NDJSON'.padStart(9)}  same rows as csv-parse`);
      for (const name of candidates) {
        const r = rate(name);
        const same = name === 'ndjson' ? '—' : hashes.get(name) === hashes.get('csv-parse') ? 'yes' : 'NO';
        console.log(`${name.padEnd(12)} ${`${fmt(r.median)} (${fmt(r.min)}–${fmt(r.max)})`.padEnd(30)} ${(1e6 / r.median).toFixed(1).padStart(7)} ${`${(r.median / reference).toFixed(2)}×`.padStart(12)} ${`${(r.median / ndjson).toFixed(2)}×`.padStart(9)}  ${same}`);
      }
    }
    console.log(`\nload average after ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args.child) {
  const [candidate, file] = positionals as [string, string];
  process.stdout.write(JSON.stringify(await childRun(candidate, file, args.hash)));
  process.exit(0);
}
await main();
