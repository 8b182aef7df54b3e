/*
 * Issue #18, goal 1: the first (uncached) JSON, XML and YML exports, now built by the database
 * (model/json-record.ts, model/xml-record.ts, model/yml-record.ts), against the database's own
 * command-line client dumping the same rows:
 *
 * - SQLite: a fresh server's first `format=json` (then `xml`, `yml`) download of ITEMS items
 *   over HTTP ÷ `sqlite3 -json` printing the same rows (the legacy columns, in publication
 *   order; for YML, whose offers also read category, vendor, attributes… out of `extra`, the
 *   legacy columns and `extra`) of the same database file;
 * - PostgreSQL (when --database-url is given, or the test server answers at its usual address):
 *   the same downloads from a server on PostgreSQL ÷ `psql -c "\copy (SELECT …) TO STDOUT"`
 *   (the pages built by the instance's C module where it was built, else by the server's SQL).
 *
 * Each round is one download on a fresh server (its render cache in a fresh directory) and one
 * run of the client, alternating which goes first; the figure is items/s, ours ÷ the client's.
 * `--server running` measures the same first downloads on one running server instead, as a
 * deployment serves them: it publishes the same items once per round (untimed, before the rounds)
 * as stores of their own, then each round downloads a store's export for the first time (a render
 * cache miss: a new store has no variants asked for, so nothing is warmed ahead). A fresh server's
 * first render also pays for the new process (its heap's first page faults, code not yet
 * compiled): measured on a host with dear page faults, that was most of the difference
 * (bench/RESULTS.md, "2026-11-27, after 18:00").
 * The service runs compiled, as `npm start` runs it (built afresh into .cache/bench-dist when the
 * script starts); `--service tsx` runs the tree's TypeScript through tsx instead, as the figures
 * before did: a fresh server then also transpiles the export's modules during its first export
 * (bench/RESULTS.md, "2026-11-27, before midnight").
 * `--client curl` downloads with curl (to /dev/null; the reference's client writes to a pipe)
 * instead of this process's Node client, whose CPU a round the notes count as "the HTTP client".
 * Goal ≥ 1.0×. Each figure's notes give the CPU a round kept busy: the service, PostgreSQL's
 * processes (all of this machine's) and the HTTP client for ours; the client and PostgreSQL's
 * processes for the reference. On two cores their sum is what limits a render.
 *
 * `--formats json,xml,yml,csv` adds the CSV (CONTRACT's legacy columns); `--dialects postgresql` skips SQLite.
 * On SQLite the goal's second half, "CSV/TSV and XLSX keep ≥ 2×", takes `--formats csv,tsv,xlsx`:
 * CSV and TSV against `sqlite3 -csv` (as the issue measured), XLSX against libxlsxwriter (C,
 * constant_memory) writing the same cells from the same rows (bench/references/xlsx-reference.c,
 * built here with `cc`; needs Debian's libxlsxwriter-dev and libsqlite3-dev). Goal ≥ 2.0×.
 * `--per-round K` times K first downloads (K fresh servers, or K stores on a running one) against
 * K runs of the client in each round, instead of one: a 100k-item render takes 60–150 ms, short
 * enough on a shared machine for one scheduling hiccup on either side to decide a round.
 * `--categories N` spreads the items over N three-level category paths instead of 40 (a large
 * catalogue's tree: YML's offers look up each item's category id).
 *
 *   node --import tsx bench/figures/first-json-xml.ts [--rounds 5] [--items 100000] [--formats json,xml,yml] [--dialects sqlite,postgresql] [--categories N] [--server fresh|running] [--client node|curl] [--service built|tsx] [--per-round K] [--quick] [--database-url postgres://…]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir, availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../../src/store/factory.js';
import { benchStore, categoryPaths } from '../bench-data.js';
import { download } from '../http-client.js';
import { alternatingRounds, emitResult, median, roundRatios, metInEveryRound } from '../lib/bench-result.js';
import { cpuSeconds, reapedChildrenCpuSeconds, measurePostgresCpu, rssMiB, sampleRss, startServer, type ServerProcess } from '../server-process.js';
import { createEmptyDatabase } from '../../test/multi-instance/processes.js';
import { tcpAccepts } from '../../test/support/tcp-accepts.js';
import { builtServiceCommand, tsxServiceCommand } from '../lib/built-service.js';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    items: { type: 'string' },
    formats: { type: 'string', default: 'json,xml,yml' },
    dialects: { type: 'string', default: 'sqlite,postgresql' },
    quick: { type: 'boolean', default: false },
    categories: { type: 'string' },
    'database-url': { type: 'string' },
    server: { type: 'string', default: 'fresh' },
    client: { type: 'string', default: 'node' },
    service: { type: 'string', default: 'built' },
    'per-round': { type: 'string', default: '1' },
  },
});
if (args.client !== 'node' && args.client !== 'curl') throw new Error('--client: node or curl');
if (args.server !== 'fresh' && args.server !== 'running') throw new Error('--server: fresh or running');
if (args.service !== 'built' && args.service !== 'tsx') throw new Error('--service: built or tsx');
/** One running server for all rounds, each round a store of its own (see the top). */
const RUNNING = args.server === 'running';
const ROUNDS = Math.max(5, Number(args.rounds));
/** First downloads (and client runs) a round times together: one 100k-item render takes ~60–150 ms, short enough for a scheduling hiccup to decide a round. */
const PER_ROUND = Math.max(1, Number(args['per-round']));
const ITEMS = Number(args.items ?? (args.quick ? 20_000 : 100_000));
const FORMATS = args.formats.split(',');
const CATEGORIES = args.categories === undefined ? undefined : categoryPaths(Number(args.categories));
const DIALECTS = args.dialects.split(',');
/** Where `npm test` looks for PostgreSQL (scripts/run-tests.mjs). */
const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
const ROOT = new URL('../../', import.meta.url).pathname;
/** The service as `npm start` runs it, built afresh (bench/lib/built-service.ts); `--service tsx`: the tree's TypeScript through tsx. */
const { command, built } = args.service === 'tsx' ? { command: tsxServiceCommand(ROOT), built: false } : builtServiceCommand(ROOT, (line) => console.log(line));
const SERVICE_NOTE = built ? 'the service compiled, as npm start runs it' : 'the service through tsx';
const dir = mkdtempSync(join(tmpdir(), 'pe-bench-first-json-'));
const LEGACY_COLUMNS = 'offer_id, name, price, old_price, currency, available, quantity, url';
/** Formats whose SQLite figure is held to ≥ 2× its client (the issue: "CSV/TSV and XLSX keep ≥ 2×"). */
const TWICE = new Set(['csv', 'tsv', 'xlsx']);
/** The rows a format's export reads: YML's offers read `extra` too. */
const selectFor = (format: string): string => `SELECT ${LEGACY_COLUMNS}${format === 'yml' ? ', extra' : ''} FROM price_items`;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return tcpAccepts(hostname, Number(port || 5432));
}

/** CPU seconds one side of a round kept busy: the service (ours) or the client (the reference), the PostgreSQL processes, this process (ours: the HTTP client). */
interface RoundCpu {
  process: number;
  postgres: number;
  httpClient: number;
}

/** Runs a client to its end, counting its output; wall seconds include starting it, as a person would run it. */
function timedClient(file: string, clientArgs: string[]): Promise<{ seconds: number; bytes: number; cpu: RoundCpu }> {
  return new Promise((resolve, reject) => {
    const clientCpuBefore = reapedChildrenCpuSeconds();
    const postgresCpu = measurePostgresCpu();
    const started = process.hrtime.bigint();
    const child = spawn(file, clientArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
    let bytes = 0;
    child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
    child.on('error', (error) => {
      postgresCpu();
      reject(error);
    });
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpu = { process: reapedChildrenCpuSeconds() - clientCpuBefore, postgres: postgresCpu(), httpClient: 0 };
      if (code !== 0) reject(new Error(`${file} exited ${code}`));
      else resolve({ seconds, bytes, cpu });
    });
  });
}

/** Compiles the XLSX reference into the scratch directory; its path. */
function buildXlsxReference(): string {
  const binary = join(dir, 'xlsx-reference');
  const built = spawnSync('cc', ['-O2', '-o', binary, join(ROOT, 'bench/references/xlsx-reference.c'), '-lxlsxwriter', '-lsqlite3'], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`cannot build the XLSX reference (apt-get install libxlsxwriter-dev libsqlite3-dev): ${built.stderr || built.error}`);
  return binary;
}

let served = 0;

/** "the service 230 (200–290), PostgreSQL 300 (…), the HTTP client 60 (…)": each process's CPU over the rounds. */
function cpuNote(rounds: readonly RoundCpu[], dialect: string, processName: string): string {
  const part = (name: string, values: number[]) => `${name} ${ms(median(values))} (${ms(Math.min(...values))}–${ms(Math.max(...values))})`;
  const parts = [part(processName, rounds.map((r) => r.process))];
  if (dialect === 'PostgreSQL') parts.push(part('PostgreSQL', rounds.map((r) => r.postgres)));
  if (rounds.some((r) => r.httpClient > 0)) parts.push(part('the HTTP client', rounds.map((r) => r.httpClient)));
  return parts.join(', ');
}

const ms = (seconds: number) => (seconds * 1000).toFixed(0);
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
/** A round's CPU over its downloads (or client runs). */
const summed = (cpus: readonly RoundCpu[]): RoundCpu => ({ process: sum(cpus.map((c) => c.process)), postgres: sum(cpus.map((c) => c.postgres)), httpClient: sum(cpus.map((c) => c.httpClient)) });

type Download = { seconds: number; bytes: number; firstByteSeconds: number; rssGrowthMiB: number; cpu: RoundCpu };

/** One first download of the format on a fresh server (a fresh render cache): seconds, bytes, the server's RSS growth. */
async function firstDownload(format: string, databaseUrl: string, key: string): Promise<Download> {
  const server = await startServer({ command, databaseUrl, cwd: ROOT, env: { CACHE_DIR: join(dir, `cache-${served++}`) } });
  try {
    // Settle as bench/run.ts does: the first request compiles the routes' code paths.
    await download(`${server.base}/api/me`, { 'x-api-key': key });
    await new Promise((resolve) => setTimeout(resolve, 300));
    return await timedDownload(server, format, key);
  } finally {
    await server.stop();
  }
}

/** The first download of the format with `key` from `server`, its CPU and RSS growth measured. */
async function timedDownload(server: ServerProcess, format: string, key: string): Promise<Download> {
  const idle = rssMiB(server.pid);
  const stopSampling = sampleRss(server.pid);
  const serviceCpuBefore = cpuSeconds(server.pid);
  const postgresCpu = measurePostgresCpu();
  const url = `${server.base}/api/export/latest?key=${key}&format=${format}`;
  const { clientCpu, ...run } = await (args.client === 'curl' ? curlDownload : nodeDownload)(url);
  const cpu = { process: cpuSeconds(server.pid) - serviceCpuBefore, postgres: postgresCpu(), httpClient: clientCpu };
  const peak = stopSampling();
  if (run.status !== 200) throw new Error(`format=${format} answered ${run.status}`);
  return { ...run, rssGrowthMiB: peak - idle, cpu };
}

/** A download's status, bytes and times, and the CPU seconds its client used. */
type ClientDownload = { status: number; bytes: number; seconds: number; firstByteSeconds: number; clientCpu: number };

/** `url` downloaded by this process's Node client. */
async function nodeDownload(url: string): Promise<ClientDownload> {
  const before = process.cpuUsage();
  const run = await download(url);
  const used = process.cpuUsage(before);
  return { ...run, clientCpu: (used.user + used.system) / 1e6 };
}

/** `url` downloaded by curl to /dev/null: its status, bytes and times, as curl reports them. */
function curlDownload(url: string): Promise<ClientDownload> {
  return new Promise((resolve, reject) => {
    const cpuBefore = reapedChildrenCpuSeconds();
    const started = process.hrtime.bigint();
    const child = spawn('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_starttransfer}', url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      // Wall time as the reference's: from starting the client to its exit.
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const [status, bytes, firstByte] = out.split(' ').map(Number);
      if (code !== 0) reject(new Error(`curl exited ${code}`));
      else resolve({ status, bytes, seconds, firstByteSeconds: firstByte, clientCpu: reapedChildrenCpuSeconds() - cpuBefore });
    });
  });
}

/**
 * Once, outside the rounds: the first answer is the whole list (JSON: parsed; XML, YML: its
 * items or offers counted). On `running`, the running server's (its first render of the format).
 */
async function checkAnswer(format: string, databaseUrl: string, key: string, running?: ServerProcess): Promise<void> {
  const server = running ?? (await startServer({ command, databaseUrl, cwd: ROOT, env: { CACHE_DIR: join(dir, `cache-${served++}`) } }));
  try {
    const answer = await fetch(`${server.base}/api/export/latest?key=${key}&format=${format}`, { headers: { 'accept-encoding': 'identity' } });
    if (format === 'xlsx') {
      // A workbook is a ZIP; its cells are the XLSX tests' business (openpyxl, LibreOffice).
      const bytes = Buffer.from(await answer.arrayBuffer());
      if (answer.status !== 200 || bytes.subarray(0, 2).toString('latin1') !== 'PK') throw new Error(`the xlsx answer is no workbook (${answer.status})`);
      return;
    }
    const text = await answer.text();
    // CSV: a header line, then a line per item (the bench items hold no line breaks).
    const items = format === 'json' ? (JSON.parse(text) as { items: unknown[] }).items.length
      : format === 'xml' ? text.split('<item>').length - 1
      : format === 'yml' ? text.split('<offer ').length - 1
      : text.split('\n').filter((line) => line !== '').length - 1;
    if (items !== ITEMS) throw new Error(`the ${format} holds ${items} items, not ${ITEMS}`);
  } finally {
    if (!running) await server.stop();
  }
}

interface Dialect {
  name: 'SQLite' | 'PostgreSQL';
  databaseUrl: string;
  /** The goal's ratio for a format. */
  goal(format: string): number;
  reference(format: string): string;
  /** The client's command line for the rows a format reads of a list, and the file it writes them to (none: stdout). */
  client(listId: number, format: string): [string, string[], string?];
}

async function measure(dialect: Dialect): Promise<void> {
  const db = await openDatabase(dialect.databaseUrl);
  let key: string;
  let listId: number;
  /** On a running server, a store's key a round of each format: the same items again (untimed, before any round). */
  const roundKeys = new Map<string, string[]>();
  try {
    await db.migrate();
    const started = performance.now();
    key = await benchStore(db, 'bench-json', ITEMS, CATEGORIES);
    const list = await db.priceLists.latest('bench-json');
    if (!list) throw new Error('nothing published');
    listId = list.items_list_id;
    console.log(`${dialect.name}: ${fmt(ITEMS)} items published in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    for (const format of RUNNING ? FORMATS : []) {
      const keys: string[] = [];
      for (let round = 0; round < ROUNDS * PER_ROUND; round++) keys.push(await benchStore(db, `bench-${format}-${round}`, ITEMS, CATEGORIES));
      roundKeys.set(format, keys);
    }
  } finally {
    await db.close();
  }
  const server = RUNNING ? await startServer({ command, databaseUrl: dialect.databaseUrl, cwd: ROOT, env: { CACHE_DIR: join(dir, `cache-${served++}`) } }) : null;
  try {
    for (const format of FORMATS) {
      const [file, clientArgs, output] = dialect.client(listId, format);
      await measureFormat(dialect, format, key, file, clientArgs, output, server ? { server, keys: roundKeys.get(format)! } : undefined);
    }
  } finally {
    await server?.stop();
  }
}

/** `running`: the server the rounds download from, and a store's key for each round. */
async function measureFormat(dialect: Dialect, format: string, key: string, file: string, clientArgs: string[], output?: string, running?: { server: ServerProcess; keys: string[] }): Promise<void> {
  // On a running server this is its first render of the format (of the first store's list).
  await checkAnswer(format, dialect.databaseUrl, key, running?.server);

  const load = [loadavg()[0]];
  const bytes = { ours: 0, theirs: 0 };
  const firstBytes: number[] = [];
  const rssGrowth: number[] = [];
  const cpu = { ours: [] as RoundCpu[], theirs: [] as RoundCpu[] };
  const rounds = await alternatingRounds(
    ROUNDS,
    async () => {
      const runs: Download[] = [];
      for (let k = 0; k < PER_ROUND; k++) runs.push(running ? await timedDownload(running.server, format, running.keys.shift()!) : await firstDownload(format, dialect.databaseUrl, key));
      bytes.ours = runs[0].bytes;
      firstBytes.push(...runs.map((run) => run.firstByteSeconds));
      rssGrowth.push(...runs.map((run) => run.rssGrowthMiB));
      cpu.ours.push(summed(runs.map((run) => run.cpu)));
      return (ITEMS * PER_ROUND) / sum(runs.map((run) => run.seconds));
    },
    async () => {
      const runs: Awaited<ReturnType<typeof timedClient>>[] = [];
      for (let k = 0; k < PER_ROUND; k++) runs.push(await timedClient(file, clientArgs));
      // The XLSX reference writes its workbook to a file, not to stdout.
      bytes.theirs = output === undefined ? runs[0].bytes : statSync(output).size;
      cpu.theirs.push(summed(runs.map((run) => run.cpu)));
      return (ITEMS * PER_ROUND) / sum(runs.map((run) => run.seconds));
    },
  );
  load.push(loadavg()[0]);
  const ratios = roundRatios({ ...rounds, higherIsBetter: true });
  emitResult({
    figure: `first (uncached) ${format.toUpperCase()} of ${fmt(ITEMS)} items${CATEGORIES ? ` in ${fmt(CATEGORIES.length)} categories` : ''} over HTTP, ${dialect.name}${RUNNING ? ', on a running server' : ''}${args.client === 'curl' ? ', downloaded by curl' : ''}, items/s`,
    unit: 'items/s',
    higherIsBetter: true,
    ours: rounds.ours,
    reference: rounds.reference,
    referenceName: dialect.reference(format),
    goal: `≥ ${dialect.goal(format).toFixed(1)}×`,
    met: metInEveryRound(ratios, dialect.goal(format)),
    notes: `${(bytes.ours / 2 ** 20).toFixed(1)} MiB of ${format.toUpperCase()} against the client's ${(bytes.theirs / 2 ** 20).toFixed(1)} MiB; first byte after a median ${(median(firstBytes) * 1000).toFixed(0)} ms; server RSS +${median(rssGrowth).toFixed(0)} MiB (max +${Math.max(...rssGrowth).toFixed(0)}) over idle; ${PER_ROUND > 1 ? `a round ${PER_ROUND} first downloads against ${PER_ROUND} runs of the client, timed together; ` : ''}CPU ms a round, median (min–max): ours ${cpuNote(cpu.ours, dialect.name, 'the service')}; the reference ${cpuNote(cpu.theirs, dialect.name, 'the client')}; ${SERVICE_NOTE}; ${availableParallelism()} CPUs, load ${load.map((l) => l.toFixed(2)).join(' → ')}`,
  });
}

try {
  const sqliteFile = join(dir, 'bench.db');
  if (DIALECTS.includes('sqlite')) {
    const xlsxReference = FORMATS.includes('xlsx') ? buildXlsxReference() : '';
    // TSV against `-csv` too, as the issue measured it (`-tabs`, which quotes nothing, is the faster client).
    const mode: Record<string, string> = { csv: '-csv', tsv: '-csv' };
    await measure({
      name: 'SQLite',
      databaseUrl: `sqlite:${sqliteFile}`,
      goal: (format) => (TWICE.has(format) ? 2 : 1),
      reference: (format) =>
        format === 'xlsx' ? 'libxlsxwriter (C, constant_memory) writing the same cells from the same rows (bench/references/xlsx-reference.c)'
        : `\`sqlite3 ${mode[format] ?? '-json'}\` printing the same rows (legacy columns${format === 'yml' ? ' and extra' : ''}, publication order)`,
      client: (listId, format) =>
        format === 'xlsx' ? [xlsxReference, [sqliteFile, String(listId), join(dir, 'reference.xlsx')], join(dir, 'reference.xlsx')]
        : ['sqlite3', [mode[format] ?? '-json', sqliteFile, `${selectFor(format)} WHERE price_list_id = ${listId} ORDER BY seq`]],
    });
  }
  const pgAdmin = args['database-url'] ?? DEFAULT_PG_URL;
  if (!DIALECTS.includes('postgresql')) {
    console.log('PostgreSQL: not asked for (--dialects)');
  } else if (args['database-url'] !== undefined || (await reachable(pgAdmin))) {
    const created = await createEmptyDatabase(pgAdmin);
    try {
      await measure({
        name: 'PostgreSQL',
        databaseUrl: created.url,
        goal: () => 1,
        reference: (format) => `\`psql -c "\\copy (SELECT the same rows${format === 'yml' ? ', extra too' : ''}) TO STDOUT"\` (text COPY)`,
        client: (listId, format) => ['psql', [created.url, '-X', '-q', '-c', `\\copy (${selectFor(format)} WHERE price_list_id = ${listId} ORDER BY seq) TO STDOUT`]],
      });
    } finally {
      await created.drop();
    }
  } else {
    console.log(`PostgreSQL: nothing answers at ${pgAdmin}; its figure is not measured`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
