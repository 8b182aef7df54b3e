/*
 * A bounded load run on loopback: the real service as a child process (SQLite, a few stores
 * with a few thousand items each), driven by wrk (/usr/bin/wrk) with a Lua script that mixes
 * the addresses, formats, profiles, the filter, gzip and conditional requests (If-None-Match
 * → 304). Reports throughput, p50/p99 latency, every status seen, socket errors, the server's
 * peak RSS, and checks the server's log: no error lines, no key in any line.
 *
 *   node --import tsx bench/load.ts [--connections 200] [--duration 60] [--items 3000] [--threads 2]
 *
 * Every answer must be 200 or 304; anything else is printed and fails the run (exit 1).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { issueKey } from '../src/domain/keys.js';
import { putProfile } from '../src/domain/profiles.js';
import { publishPriceList, readPublication } from '../src/domain/publishing.js';
import { createStore } from '../src/domain/stores.js';
import { openDatabase } from '../src/store/factory.js';

const { values: args } = parseArgs({
  options: { connections: { type: 'string', default: '200' }, duration: { type: 'string', default: '60' }, items: { type: 'string', default: '3000' }, threads: { type: 'string', default: '2' } },
});
const CONNECTIONS = Number(args.connections);
const DURATION_S = Number(args.duration);
const ITEMS = Number(args.items);
const THREADS = Number(args.threads);
const STORES = 4;
const ROOT = new URL('..', import.meta.url).pathname;

const dir = mkdtempSync(join(tmpdir(), 'price-export-load-'));
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'production', LOG_LEVEL: 'info', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`, RATE_LIMIT_PER_MIN: '1000000' };

function items(store: number): string {
  const lines: string[] = [];
  for (let i = 0; i < ITEMS; i++) {
    lines.push(JSON.stringify({
      offer_id: `S${store}-${i}`, name: `Item ${i}, "quoted" ${'Смартфон'.repeat(i % 3)}`, price: `${100 + (i % 9000)}.${String(i % 100).padStart(2, '0')}`,
      old_price: i % 3 ? 200 + (i % 9000) : undefined, quantity: i % 6, url: `https://s${store}.example/p/${i}`, vendor: `V${i % 40}`,
      category: `Cat ${i % 12} / Sub ${i % 5}`, competitors: i % 2 ? [{ name: `rival-${i % 7}`, price: 150 + (i % 9000) }] : undefined,
      attributes: { color: ['red', 'black', 'white'][i % 3] },
    }));
  }
  return lines.join('\n');
}

/** Stores, keys (store 0 has two: one quota, two keys), a profile each and a published list. */
async function seed(): Promise<Array<{ id: string; keys: string[]; profile: number }>> {
  const db = await openDatabase(env.DATABASE_URL);
  await db.migrate();
  const seeded = [];
  for (let s = 0; s < STORES; s++) {
    const id = `load-${s}`;
    await createStore(db, { id, name: `Load ${s}`, url: `https://s${s}.example` });
    const keys = [(await issueKey(db, id, 'load')).value];
    if (s === 0) keys.push((await issueKey(db, id, 'second')).value);
    const profile = await putProfile(db, id, { name: 'short', columns: [{ field: 'offer_id', title: 'SKU' }, { field: 'name', title: 'Name' }, { field: 'price', title: 'Price' }, { field: 'attributes.color', title: 'Color' }] });
    await publishPriceList(db, id, readPublication(db, Readable.from([Buffer.from(items(s))]), 'ndjson'));
    seeded.push({ id, keys, profile: profile.id });
  }
  await db.close();
  return seeded;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Shape { path: string; headers: Record<string, string>; weight: number }

/** The request mix: weights are out of the whole; a conditional twin reuses the answer's ETag. */
function shapes(seeded: Awaited<ReturnType<typeof seed>>): Shape[] {
  const list: Shape[] = [];
  for (const { keys, profile } of seeded) {
    for (const key of keys) {
      list.push({ path: `/WebApi/CampaignDataLatestGet/${key}`, headers: {}, weight: 6 });
      list.push({ path: `/api/export/latest?key=${key}`, headers: {}, weight: 4 });
      list.push({ path: `/api/export/latest?key=${key}&format=json`, headers: { 'Accept-Encoding': 'gzip' }, weight: 3 });
      list.push({ path: `/api/export/latest?key=${key}&format=yml&only_available=true`, headers: { 'Accept-Encoding': 'br, gzip' }, weight: 2 });
      list.push({ path: `/WebApi/CampaignDataLatestGet/${key}?format=xml&profile_id=${profile}`, headers: {}, weight: 2 });
      list.push({ path: `/api/export/latest?key=${key}&format=tsv&profile_id=${profile}`, headers: { 'Accept-Encoding': 'gzip' }, weight: 2 });
      list.push({ path: `/api/export/latest?key=${key}&format=xlsx`, headers: {}, weight: 1 });
      list.push({ path: `/WebApi/SummaryExportLatestGet/${key}`, headers: {}, weight: 1 });
      list.push({ path: '/api/me', headers: { 'X-Api-Key': key }, weight: 3 });
    }
  }
  return list;
}

const lua = (text: string) => JSON.stringify(text); // ASCII only here: JSON's escapes are Lua's.

function wrkScript(requests: Shape[]): string {
  const entries = requests.flatMap((r) => Array.from({ length: r.weight }, () =>
    `wrk.format("GET", ${lua(r.path)}, {${Object.entries(r.headers).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(', ')}})`));
  return `
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  requests = { ${entries.join(',\n    ')} }
  statuses = {}
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end
function request() return requests[math.random(#requests)] end
function response(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
function done(summary, latency, requests)
  local all = {}
  for _, t in ipairs(threads) do
    for status, n in pairs(t:get("statuses")) do all[status] = (all[status] or 0) + n end
  end
  local parts = {}
  for status, n in pairs(all) do table.insert(parts, string.format('"%d": %d', status, n)) end
  io.write(string.format('RESULT {"requests": %d, "duration_us": %d, "bytes": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d, "errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}, "statuses": {%s}}\\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout, table.concat(parts, ", ")))
end`;
}

/** Each shape once more, with If-None-Match from a first answer: the conditional twins (→ 304). */
async function withConditionals(base: string, list: Shape[]): Promise<Shape[]> {
  const result = [...list];
  for (const shape of list) {
    const answer = await fetch(base + shape.path, { headers: shape.headers });
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`${shape.path.replace(/pex_\w+/, 'pex_…')}: ${answer.status} before the run`);
    const etag = answer.headers.get('etag');
    if (etag) result.push({ path: shape.path, headers: { ...shape.headers, 'If-None-Match': etag }, weight: shape.weight });
  }
  return result;
}

async function main(): Promise<number> {
  const started = Date.now();
  const seeded = await seed();
  const keys = seeded.flatMap((s) => s.keys);
  console.log(`seeded ${STORES} stores × ${ITEMS} items in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  const port = await freePort();
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], { cwd: ROOT, env: { ...env, HOST: '127.0.0.1', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  // The log is scanned as it streams, not kept: a key in any line or any error line fails the run.
  const log = { lines: 0, errorLines: [] as string[], warnings: new Set<string>(), keyLines: 0, msByRoute: new Map<string, number[]>() };
  let listening: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  for (const stream of [server.stdout, server.stderr]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        log.lines++;
        if (line.includes('Server listening at')) listening();
        if (keys.some((key) => line.includes(key) || line.includes(key.slice(4)))) log.keyLines++;
        // Node's own warnings (a deprecation) are noted, not failures; any other non-JSON line is.
        if (/Warning|FSTDEP|--trace-warnings/.test(line) && !line.startsWith('{')) {
          log.warnings.add(line.slice(0, 200));
          continue;
        }
        const entry = line.startsWith('{') ? JSON.parse(line) : { level: 50, msg: line };
        if (entry.level >= 50) log.errorLines.push(line.slice(0, 300));
        if (entry.msg === 'request') {
          const route = `${entry.route} ${entry.status}`;
          if (!log.msByRoute.has(route)) log.msByRoute.set(route, []);
          log.msByRoute.get(route)!.push(entry.ms);
        }
      }
    });
  }
  await Promise.race([ready, new Promise((_, reject) => setTimeout(() => reject(new Error('the server did not start')), 20_000))]);
  const base = `http://127.0.0.1:${port}`;

  let mix = shapes(seeded);
  const summary = await fetch(`${base}/WebApi/SummaryExportLatestGet/${keys[0]}`);
  await summary.arrayBuffer();
  if (summary.status === 404) {
    console.log('(the summary address is not registered in this build: left out of the mix)');
    mix = mix.filter((shape) => !shape.path.startsWith('/WebApi/SummaryExportLatestGet/'));
  }
  mix = await withConditionals(base, mix);
  const script = join(dir, 'mix.lua');
  writeFileSync(script, wrkScript(mix));

  console.log(`wrk: ${CONNECTIONS} connections, ${THREADS} threads, ${DURATION_S} s, ${mix.length} request shapes (half of them conditional)`);
  const wrk = spawn('wrk', ['-t', String(THREADS), '-c', String(CONNECTIONS), '-d', `${DURATION_S}s`, '--timeout', '10s', '-s', script, base], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  wrk.stdout.setEncoding('utf8');
  wrk.stdout.on('data', (chunk: string) => (output += chunk));
  await new Promise((resolve) => wrk.on('exit', resolve));
  const peakRss = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1];

  server.kill('SIGTERM');
  const exit = await new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  rmSync(dir, { recursive: true, force: true });

  const line = output.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`no result from wrk:\n${output}`);
  const result = JSON.parse(line.slice('RESULT '.length)) as {
    requests: number; duration_us: number; bytes: number; p50_us: number; p90_us: number; p99_us: number; max_us: number;
    errors: Record<string, number>; statuses: Record<string, number>;
  };
  const seconds = result.duration_us / 1e6;
  const unexpected = Object.entries(result.statuses).filter(([status]) => status !== '200' && status !== '304');
  const socketErrors = Object.values(result.errors).reduce((a, b) => a + b, 0);
  const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`;
  console.log(`
requests      ${result.requests.toLocaleString('en-US')} in ${seconds.toFixed(1)} s = ${Math.round(result.requests / seconds).toLocaleString('en-US')} req/s, ${(result.bytes / seconds / 1048576).toFixed(1)} MiB/s
latency       p50 ${ms(result.p50_us)}   p90 ${ms(result.p90_us)}   p99 ${ms(result.p99_us)}   max ${ms(result.max_us)}
statuses      ${Object.entries(result.statuses).map(([s, n]) => `${s}: ${n.toLocaleString('en-US')}`).join('   ')}
socket errors ${JSON.stringify(result.errors)}
server        peak RSS ${peakRss ? `${Math.round(Number(peakRss) / 1024)} MiB` : '?'}, ${log.lines.toLocaleString('en-US')} log lines, ${log.errorLines.length} error lines, ${log.keyLines} lines with a key; exit code after SIGTERM ${exit}`);
  // The server's own view per route and status (time to the last byte handed to the socket): where the tail comes from.
  for (const [route, all] of [...log.msByRoute].sort((a, b) => b[1].length - a[1].length)) {
    const sorted = all.sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    console.log(`  ${route.padEnd(48)} ${String(sorted.length).padStart(7)}  p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  max ${sorted[sorted.length - 1]} ms`);
  }
  for (const error of log.errorLines.slice(0, 5)) console.log(`  error: ${error}`);
  for (const warning of log.warnings) console.log(`  warning: ${warning}`);

  const failures = [
    unexpected.length > 0 && `unexpected statuses ${JSON.stringify(Object.fromEntries(unexpected))}`,
    socketErrors > 0 && `socket errors ${JSON.stringify(result.errors)}`,
    log.errorLines.length > 0 && `${log.errorLines.length} error lines in the server log`,
    log.keyLines > 0 && `${log.keyLines} log lines contain a key`,
    exit !== 0 && `the server exited ${exit} after SIGTERM`,
  ].filter(Boolean);
  for (const failure of failures) console.log(`FAIL: ${failure}`);
  return failures.length === 0 ? 0 : 1;
}

process.exitCode = await main();
