/*
 * The in-memory references of bench/run.ts, each in its own process so that its time and
 * memory are its own:
 *
 *   node --import tsx bench/references.ts csv-stringify 1000000
 *   node --import tsx bench/references.ts exceljs 100000
 *
 * Both write the rows bench-data.ts publishes, already in memory as PriceItems (no database,
 * no HTTP), into a byte counter; the timing excludes building the rows. Prints one JSON line.
 */
import { stringify } from 'csv-stringify';
import { LEGACY_COLUMNS } from '../src/model/columns.js';
import { formatMoney } from '../src/model/money.js';
import type { PriceItem } from '../src/model/price-item.js';
import { benchItems } from './bench-data.js';
import { exceljsBytes } from './exceljs-reference.js';

export interface ReferenceRun {
  items: number;
  seconds: number;
  cpuSeconds: number;
  bytes: number;
}

/** csv-stringify with the legacy layout's options (CRLF, quoting a leading or trailing space). */
async function csvStringify(items: readonly PriceItem[]): Promise<number> {
  let bytes = 0;
  const stringifier = stringify({ header: true, columns: LEGACY_COLUMNS.map((c) => c.key), record_delimiter: '\r\n', quoted_match: /^ | $/ });
  const done = (async () => {
    for await (const chunk of stringifier) bytes += (chunk as Buffer).byteLength;
  })();
  for (const item of items) {
    const ok = stringifier.write([
      item.offer_id, item.name, formatMoney(item.price), item.old_price === null ? '' : formatMoney(item.old_price), item.currency,
      item.available ? '1' : '0', item.quantity === null ? '' : String(item.quantity), item.url ?? '',
    ]);
    if (!ok) await new Promise((resolve) => stringifier.once('drain', resolve));
  }
  stringifier.end();
  await done;
  return bytes;
}

const REFERENCES = { 'csv-stringify': csvStringify, exceljs: exceljsBytes } as const;

const [name, count] = process.argv.slice(2) as [keyof typeof REFERENCES, string];
const write = REFERENCES[name];
if (!write) throw new Error(`unknown reference ${name}`);
const items = benchItems(Number(count));
await write(items.slice(0, Math.min(20_000, items.length))); // warm up the JIT, as the server is warm
const cpu = process.cpuUsage();
const started = performance.now();
const bytes = await write(items);
const used = process.cpuUsage(cpu);
const run: ReferenceRun = { items: items.length, seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6, bytes };
console.log(JSON.stringify(run));
