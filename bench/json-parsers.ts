/*
 * Issue #18, goal 2: which streaming JSON reader keeps up with NDJSON. Each candidate reads the
 * same items from a file, through the same UTF-8 check the service runs (text-decoding.ts),
 * and hands them one at a time to an async loop, as readSource does; nothing is stored.
 *
 *   node --import tsx bench/json-parsers.ts [--items 300000] [--rounds 5] [--shape rich,lean] [--only a,b]
 *
 * Candidates, each for a JSON array and for {"items": [...]}:
 *   stream-json        pick + streamArray, as src/domain/publication-source.ts read JSON before
 *   stream-json-packed the same with streamValues: false (only packed tokens; fewer tokens)
 *   streamparser       @streamparser/json, paths $.* / $.items.*, keepStack: false
 *   splitter           src/domain/json-items.ts: a byte scanner for item boundaries + JSON.parse
 * and the reference, NDJSON through the current path (readSource 'ndjson').
 *
 * Shapes: "rich" (bench-data.ts richItem: categories, 2–4 competitors, 4–6 attributes, Cyrillic,
 * ~900 bytes) and "lean" (rawItem, the ~140-byte item of the other figures).
 *
 * Each run is a child process (its peak RSS its own); a round runs every candidate once, the
 * first one rotating each round, and each figure is the median of the rounds with min–max.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline, type Duplex, type Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { JSONParser } from '@streamparser/json';
import pick from 'stream-json/filters/pick.js';
import streamArray from 'stream-json/streamers/stream-array.js';
import { itemValue, JsonItemSplitter } from '../src/domain/json-items.js';
import { readSource } from '../src/domain/publication-source.js';
import { decodedAsUtf8 } from '../src/domain/text-decoding.js';
import { rawItem, richItem } from './bench-data.js';
import { spread } from './lib/bench-result.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    items: { type: 'string', default: '300000' },
    rounds: { type: 'string', default: '5' },
    shape: { type: 'string', default: 'rich,lean' },
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    child: { type: 'boolean', default: false },
  },
});

type Form = 'array' | 'object' | 'ndjson';
interface Run { seconds: number; items: number; peakRssMiB: number; startRssMiB: number }

const CANDIDATES: Record<string, (input: Readable, form: Form) => AsyncIterable<unknown>> = {
  'stream-json': (input, form) => viaStreamJson(input, form, {}),
  'stream-json-packed': (input, form) => viaStreamJson(input, form, { streamValues: false }),
  streamparser: viaStreamparser,
  splitter: viaSplitter,
  ndjson: (input) => rowsOf(readSource(input, 'ndjson')),
};

function chain(input: Readable, ...stages: Duplex[]): Duplex {
  return pipeline([input, ...stages] as unknown as [Readable, Duplex], () => undefined) as unknown as Duplex;
}

async function* viaStreamJson(input: Readable, form: Form, options: Record<string, unknown>): AsyncIterable<unknown> {
  const text = chain(input, decodedAsUtf8('utf-8'));
  const items = form === 'array'
    ? chain(text, streamArray.withParserAsStream(options))
    : chain(text, pick.withParserAsStream({ ...options, filter: (stack: readonly unknown[]) => stack.length === 1 && stack[0] === 'items' }), streamArray.asStream());
  for await (const { value } of items as AsyncIterable<{ value: unknown }>) yield value;
}

async function* viaStreamparser(input: Readable, form: Form): AsyncIterable<unknown> {
  const parser = new JSONParser({ paths: [form === 'array' ? '$.*' : '$.items.*'], keepStack: false });
  let batch: unknown[] = [];
  parser.onValue = ({ value }) => { batch.push(value); };
  for await (const chunk of chain(input, decodedAsUtf8('utf-8')) as AsyncIterable<Buffer>) {
    parser.write(chunk);
    yield* batch;
    batch = [];
  }
  if (!parser.isEnded) parser.end(); // it ends by itself once the top-level value closes
  yield* batch;
}

async function* viaSplitter(input: Readable): AsyncIterable<unknown> {
  const splitter = new JsonItemSplitter(16 * 1024 * 1024);
  for await (const chunk of chain(input, decodedAsUtf8('utf-8')) as AsyncIterable<Buffer>) {
    for (const item of splitter.push(chunk)) yield itemValue(item);
  }
  splitter.end();
}

async function* rowsOf(rows: AsyncIterable<{ raw: unknown }>): AsyncIterable<unknown> {
  for await (const row of rows) yield row.raw;
}

/** Child: read `file` with `candidate`, touching every item as validation would. */
async function childRun(candidate: string, form: Form, file: string): Promise<Run> {
  const startRssMiB = process.memoryUsage().rss / 2 ** 20;
  const started = performance.now();
  let items = 0;
  let names = 0;
  for await (const value of CANDIDATES[candidate](createReadStream(file), form)) {
    items++;
    names += ((value as { name: string }).name).length;
  }
  const seconds = (performance.now() - started) / 1000;
  if (names === 0) throw new Error('no names read');
  return { seconds, items, peakRssMiB: process.resourceUsage().maxRSS / 1024, startRssMiB };
}

function runChild(candidate: string, form: Form, file: string, expected: number): Run {
  const child = spawnSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, '--child', candidate, form, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.status !== 0) throw new Error(`${candidate} ${form} failed`);
  const run = JSON.parse(child.stdout) as Run;
  if (run.items !== expected) throw new Error(`${candidate} ${form}: read ${run.items} items, expected ${expected}`);
  return run;
}

async function writeFiles(dir: string, count: number, make: (i: number) => unknown): Promise<{ bytes: Record<Form, number>; files: Record<Form, string> }> {
  const files = { array: join(dir, 'items.json'), object: join(dir, 'object.json'), ndjson: join(dir, 'items.ndjson') };
  const out = { array: createWriteStream(files.array), object: createWriteStream(files.object), ndjson: createWriteStream(files.ndjson) };
  const bytes = { array: 0, object: 0, ndjson: 0 };
  const write = async (form: Form, text: string) => {
    bytes[form] += Buffer.byteLength(text);
    if (!out[form].write(text)) await new Promise<void>((resolve) => out[form].once('drain', () => resolve()));
  };
  // The object carries another key before and after "items", as a repricer's envelope might.
  await write('array', '[\n');
  await write('object', '{"generated_by": "repricer", "meta": {"store": "bench", "items": []}, "items": [\n');
  for (let i = 0; i < count; i++) {
    const json = JSON.stringify(make(i));
    const separator = i + 1 < count ? ',\n' : '\n';
    await write('array', json + separator);
    await write('object', json + separator);
    await write('ndjson', `${json}\n`);
  }
  await write('array', ']\n');
  await write('object', '], "count": ' + count + '}\n');
  await Promise.all(Object.values(out).map((stream: WriteStream) => new Promise<void>((resolve) => stream.end(() => resolve()))));
  return { bytes, files };
}

async function main(): Promise<void> {
  const count = args.quick ? 50_000 : Number(args.items);
  const rounds = Math.max(5, Number(args.rounds));
  const only = args.only ? new Set(args.only.split(',')) : null;
  const candidates = Object.keys(CANDIDATES).filter((name) => only === null || only.has(name) || name === 'ndjson');
  const shapes = args.shape.split(',') as ('rich' | 'lean')[];
  const dir = mkdtempSync(join(tmpdir(), 'price-export-json-parsers-'));
  console.log(`${count.toLocaleString('en-US')} items per file, ${rounds} rounds; ${cpus().length} CPUs (${cpus()[0]?.model}), Node ${process.version}; load average before ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  try {
    for (const shape of shapes) {
      const { bytes, files } = await writeFiles(dir, count, shape === 'rich' ? richItem : rawItem);
      console.log(`\n${shape} items: JSON array ${(bytes.array / 2 ** 20).toFixed(0)} MiB (${Math.round(bytes.array / count)} bytes/item)`);
      const runs = new Map<string, Run[]>();
      const jobs: [string, Form][] = candidates.flatMap((name): [string, Form][] => (name === 'ndjson' ? [[name, 'ndjson']] : [[name, 'array'], [name, 'object']]));
      for (let round = 0; round < rounds; round++) {
        for (let k = 0; k < jobs.length; k++) {
          const [name, form] = jobs[(k + round) % jobs.length];
          const key = `${name} ${form}`;
          runs.set(key, [...(runs.get(key) ?? []), runChild(name, form, files[form], count)]);
        }
        process.stderr.write(`  round ${round + 1}/${rounds} done, load ${loadavg()[0].toFixed(2)}\n`);
      }
      const ndjsonRate = spread(runs.get('ndjson ndjson')!.map((run) => count / run.seconds)).median;
      console.log(`${'candidate'.padEnd(30)} ${'items/s median (min–max)'.padEnd(30)} ${'MB/s'.padStart(6)} ${'÷ NDJSON'.padStart(9)}  peak RSS MiB (growth over start)`);
      for (const [key, list] of runs) {
        const rate = spread(list.map((run) => count / run.seconds));
        const form = key.split(' ')[1] as Form;
        const peak = spread(list.map((run) => run.peakRssMiB));
        const growth = spread(list.map((run) => run.peakRssMiB - run.startRssMiB));
        const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
        console.log(
          `${key.padEnd(30)} ${`${fmt(rate.median)} (${fmt(rate.min)}–${fmt(rate.max)})`.padEnd(30)} ${((rate.median * bytes[form]) / count / 1e6).toFixed(0).padStart(6)} ${`${(rate.median / ndjsonRate).toFixed(2)}×`.padStart(9)}  ${fmt(peak.median)} (+${fmt(growth.median)}, max +${fmt(growth.max)})`,
        );
      }
    }
    console.log(`\nload average after ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (args.child) {
  const [candidate, form, file] = positionals as [string, Form, string];
  process.stdout.write(JSON.stringify(await childRun(candidate, form, file)));
  process.exit(0);
}
await main();
