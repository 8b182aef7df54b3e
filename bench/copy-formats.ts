/*
 * PostgreSQL reading the same price_items rows by COPY in its text format and in its binary
 * format: what made store/postgres/items.ts send the native reader's rows as binary (#18 goal 2;
 * bench/RESULTS.md, "2026-11-27, evening"). The rows are the native item reader's own (text and
 * binary from the same items; the binary ones decoded here would equal the text ones, as
 * native-item-rows.test.ts checks), copied into a fresh table of price_items' shape and indexes
 * each round, the two formats alternating, the first rotating.
 *
 *   node --import tsx bench/copy-formats.ts [--rows 300000] [--rounds 7] [--database-url postgres://…]
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { rawItem, richItem } from './bench-data.js';
import { BINARY_COPY_HEADER, BINARY_COPY_TRAILER } from '../src/store/item-rows/copy-rows.js';
import { itemRowReader } from '../src/store/item-rows/native-item-rows.js';
import { spread } from './lib/bench-result.js';

const { values: args } = parseArgs({
  options: { rows: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '7' }, 'database-url': { type: 'string' } },
});
const count = Number(args.rows);
const rounds = Math.max(5, Number(args.rounds));
const url = args['database-url'] ?? process.env.PRICE_EXPORT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const readers = { text: itemRowReader(1, 'text'), binary: itemRowReader(1, 'binary') };
if (readers.text === null || readers.binary === null) throw new Error('the native item reader is not built (node scripts/build-native.mjs)');

/** The rows of `count` items (a third lean, the rest rich), as the reader writes them in one format. */
function rows(binary: boolean): Buffer {
  const batches: Buffer[] = binary ? [BINARY_COPY_HEADER] : [];
  for (let at = 0; at < count; at += 2000) {
    const texts: string[] = [];
    for (let i = at; i < Math.min(count, at + 2000); i++) texts.push(JSON.stringify(i % 3 === 0 ? rawItem(i) : richItem(i)));
    const bytes = Buffer.from(texts.join('\n'));
    const bounds: number[] = [];
    let start = 0;
    for (const text of texts) {
      const length = Buffer.byteLength(text);
      bounds.push(start, start + length);
      start += length + 1;
    }
    const read = readers[binary ? 'binary' : 'text']!.read(bytes, Int32Array.from(bounds), at, 'RUB', 1_000_000, null);
    if (read.accepted !== texts.length) throw new Error(`the reader left ${read.left.length} items`);
    batches.push(read.rows);
  }
  if (binary) batches.push(BINARY_COPY_TRAILER);
  return Buffer.concat(batches);
}

const TABLE = `DROP TABLE IF EXISTS bench_copy_items;
  CREATE TABLE bench_copy_items (price_list_id bigint NOT NULL, seq integer NOT NULL, offer_id text NOT NULL, name text NOT NULL,
    price bigint NOT NULL, old_price bigint, currency text NOT NULL, available boolean NOT NULL, quantity bigint, url text,
    extra text, quote_free bigint, PRIMARY KEY (price_list_id, seq));
  CREATE UNIQUE INDEX bench_copy_items_offer ON bench_copy_items(price_list_id, offer_id);`;

const client = new pg.Client({ connectionString: url });
await client.connect();

/** Seconds to COPY `data` into a fresh table, after a checkpoint (so no round pays for another's writes). */
async function copy(data: Buffer, binary: boolean): Promise<number> {
  await client.query(TABLE);
  await client.query('CHECKPOINT');
  const started = performance.now();
  const stream = client.query(copyFrom(`COPY bench_copy_items FROM STDIN${binary ? ' (FORMAT binary)' : ''}`));
  const done = new Promise((resolve, reject) => stream.on('finish', resolve).on('error', reject));
  for (let at = 0; at < data.length; at += 1 << 20) {
    if (!stream.write(data.subarray(at, at + (1 << 20)))) await new Promise((resolve) => stream.once('drain', resolve));
  }
  stream.end();
  await done;
  return (performance.now() - started) / 1000;
}

try {
  const text = rows(false);
  const binary = rows(true);
  console.log(`${count.toLocaleString('en-US')} rows: text ${(text.length / 1e6).toFixed(0)} MB, binary ${(binary.length / 1e6).toFixed(0)} MB`);
  const seconds = { text: [] as number[], binary: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    for (const format of round % 2 === 0 ? (['text', 'binary'] as const) : (['binary', 'text'] as const)) {
      seconds[format].push(await copy(format === 'text' ? text : binary, format === 'binary'));
    }
  }
  const shown = (values: number[], digits: number) => {
    const { median, min, max } = spread(values);
    return `${median.toFixed(digits)} (${min.toFixed(2)}–${max.toFixed(2)})`;
  };
  const ratios = seconds.text.map((t, k) => t / seconds.binary[k]);
  console.log(`text ${shown(seconds.text, 2)} s, binary ${shown(seconds.binary, 2)} s`);
  console.log(`text ÷ binary, per round: ${shown(ratios, 3)}×, ${rounds} alternating rounds`);
} finally {
  await client.query('DROP TABLE IF EXISTS bench_copy_items');
  await client.end();
}
