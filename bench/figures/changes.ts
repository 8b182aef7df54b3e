/*
 * Issue #14's figures: a 1M-item list of which 1 % changed (0.8 % prices, 0.1 % removed, 0.1 %
 * added).
 *
 *   1. The changes answer in JSON against the full JSON export of the same version: time
 *      (goal ≥ 20× faster) and bytes (goal ≤ 2 %). Both are rendered by the export service a
 *      cache miss runs (domain/exports.ts), in this process, read to the last byte; no render
 *      cache, no HTTP on either side; one uncounted round of both first, each side timed from a
 *      collected heap.
 *   2. The publication's extra cost of recording its changes (goal ≤ 10 %): each round publishes
 *      a new 1 %-changed list. The guard's comparison now records the changes and counts from
 *      them (versions.ts compareDraft) where it used to count in one join (versions.ts compare,
 *      which rollbacks still use). On the same two lists the bench then times the recording
 *      statements (store/sql/changes.ts recordingStatements, into a scratch table) and the old
 *      count: the reference, the publication as it was, is publication − recording + count.
 *      bench/before-after.ts --only publishing measures the same end to end against a commit
 *      from before the feed.
 *
 *   node --import tsx bench/figures/changes.ts [--items 1000000] [--rounds 5] [--quick] [--database-url postgres://…]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { collectStartupGarbage } from '../../src/cli/startup-garbage.js';
import { createExportService } from '../../src/domain/exports.js';
import type { SourceRow } from '../../src/domain/publication-source.js';
import { publishPriceList } from '../../src/domain/publishing.js';
import { createStore } from '../../src/domain/stores.js';
import { EXPORT_WRITERS } from '../../src/formats/registry.js';
import { DEFAULT_GUARD } from '../../src/model/versions.js';
import { openDatabase } from '../../src/store/factory.js';
import { recordingStatements } from '../../src/store/sql/changes.js';
import type { Database } from '../../src/store/types.js';
import { rawItem } from '../bench-data.js';
import { alternatingRounds, emitResult, median, roundRatios, metInEveryRound } from '../lib/bench-result.js';

const { values: args } = parseArgs({ options: { items: { type: 'string' }, rounds: { type: 'string', default: '5' }, quick: { type: 'boolean', default: false }, 'database-url': { type: 'string' } } });
const ITEMS = Number(args.items ?? (args.quick ? 100_000 : 1_000_000));
const ROUNDS = Math.max(5, Number(args.rounds));
const dir = mkdtempSync(join(tmpdir(), 'price-export-changes-bench-'));
const databaseUrl = args['database-url'] ?? `sqlite:${join(dir, 'bench.db')}`;
const STORE = `changes-bench-${Date.now().toString(36)}`;
const dialect = databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres';

/** Generation `g` of the catalogue: 1 % of the items differ from generation g − 1. */
async function* generation(g: number): AsyncGenerator<SourceRow> {
  const removedFrom = ITEMS - ITEMS / 1000;
  for (let i = 0; i < ITEMS + (g > 0 ? ITEMS / 1000 : 0); i++) {
    // The last 0.1 % of the first list is removed in every later one; 0.1 % new items take their place.
    if (g > 0 && i >= removedFrom && i < ITEMS) continue;
    const raw = rawItem(i >= ITEMS ? i + g * ITEMS : i);
    // 0.8 % of the prices move, a different 0.8 % each generation (for up to 124 generations):
    // an item's price goes up a cent in generation i % 125 and stays so.
    const slot = i % 125;
    if (slot >= 1 && slot <= g) raw.price = (Number(raw.price) + 0.01).toFixed(2);
    yield { position: `item ${i}`, raw, text: false };
  }
}

async function drain(stream: AsyncIterable<Uint8Array>): Promise<number> {
  let bytes = 0;
  for await (const chunk of stream) bytes += chunk.length;
  return bytes;
}

/** Runs the recording statements on two lists into a scratch table: the seconds they take. */
async function timeRecording(fresh: number, previous: number): Promise<number> {
  const { addedOrChanged, removed } = recordingStatements({ name: dialect });
  // The publication ran the removals' statement too: some offers were removed.
  const statements = [addedOrChanged, ...(removed === null ? [] : [removed])].map((sql) => sql.replace('INSERT INTO price_list_changes', 'INSERT INTO bench_changes'));
  if (dialect === 'sqlite') {
    const sqlite = new BetterSqlite3(databaseUrl.slice('sqlite:'.length));
    try {
      // The same columns as price_list_changes, and its primary key.
    sqlite.exec('CREATE TEMP TABLE bench_changes AS SELECT * FROM price_list_changes LIMIT 0; CREATE UNIQUE INDEX temp.bench_changes_key ON bench_changes (price_list_id, offer_id)');
      const started = performance.now();
      sqlite.transaction(() => { for (const sql of statements) sqlite.prepare(sql).run(-1, previous, fresh); })();
      return (performance.now() - started) / 1000;
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('CREATE TEMP TABLE bench_changes (LIKE price_list_changes INCLUDING ALL)');
    const started = performance.now();
    await client.query('BEGIN');
    for (const sql of statements) {
      let n = 0;
      await client.query(sql.replace(/\?/g, () => `$${++n}`), [-1, previous, fresh]);
    }
    await client.query('COMMIT');
    return (performance.now() - started) / 1000;
  } finally {
    await client.end();
  }
}

let db: Database | undefined;
try {
  db = await openDatabase(databaseUrl);
  await db.migrate();
  await createStore(db, { id: STORE, name: 'Changes bench', url: 'https://changes.example' });
  console.log(`publishing ${ITEMS.toLocaleString('en')} items, then the same with 1 % changed (${dialect}) …`);
  const base = await publishPriceList(db, STORE, generation(0));
  let previous = base;
  let g = 1;

  // Figure 2 first: every round's publication leaves a new latest, 1 % away from the one before.
  const publishing = { ours: [] as number[], reference: [] as number[] };
  for (let round = 0; round < ROUNDS; round++, g++) {
    const started = performance.now();
    const next = await publishPriceList(db, STORE, generation(g), { force: true });
    const total = (performance.now() - started) / 1000;
    const recording = await timeRecording(next.items_list_id, previous.items_list_id);
    const countStarted = performance.now();
    await db.versions.compare(next.items_list_id, previous.items_list_id, DEFAULT_GUARD);
    const count = (performance.now() - countStarted) / 1000;
    publishing.ours.push(total);
    publishing.reference.push(total - recording + count);
    console.log(`  round ${round + 1}: publication ${total.toFixed(2)} s, of which recording the changes ${recording.toFixed(2)} s; the old count alone ${count.toFixed(2)} s`);
    previous = next;
  }

  // Figure 1: changes since the version before the latest, against the whole latest list.
  const exports = createExportService({ db, writers: EXPORT_WRITERS });
  const store = (await db.stores.get(STORE))!;
  const list = (await db.priceLists.latest(STORE))!;
  const since = list.version - 1;
  const full = await exports.resolve({ store, list }, { endpoint: 'prices', format: 'json', onlyAvailable: false, profileId: null });
  const delta = await exports.resolveChanges({ store, list }, { format: 'json', onlyAvailable: false, profileId: null, since });
  const bytes = { full: 0, changes: 0 };
  const timed = async (run: () => Promise<number>, into: 'full' | 'changes') => {
    // Each side from a collected heap: else the changes answer, a few milliseconds, pays for the
    // collection of the ~170 MB of buffers the full export just before it left (measured: 6 ms
    // answers took 9-40 ms right after a full one, bench/RESULTS.md "2026-12-02"), and the full
    // export never for the answer's.
    collectStartupGarbage();
    const started = performance.now();
    bytes[into] = await run();
    return (performance.now() - started) / 1000;
  };
  // One uncounted round of both first, as json-publish.ts does: the first answer of a process
  // prepares its statements on each page thread and compiles its code; its time is in the notes.
  const warmUp = { changes: await timed(() => drain(exports.open(delta)), 'changes'), full: await timed(() => drain(exports.open(full)), 'full') };
  const answers = await alternatingRounds(
    ROUNDS,
    () => timed(() => drain(exports.open(delta)), 'changes'),
    () => timed(() => drain(exports.open(full)), 'full'),
  );
  // What the answer holds, to show the share changed.
  const chunks: Buffer[] = [];
  for await (const chunk of exports.open(delta)) chunks.push(Buffer.from(chunk));
  const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { changed: unknown[]; removed: unknown[] };
  const share = `${answer.changed.length.toLocaleString('en')} changed or added and ${answer.removed.length.toLocaleString('en')} removed offers`;
  const load = loadavg()[0].toFixed(1);
  emitResult({
    figure: `changes since the previous version, json, ${ITEMS.toLocaleString('en')} items with 1 % changed (${dialect}): time`,
    unit: 's', higherIsBetter: false, ours: answers.ours, reference: answers.reference,
    referenceName: 'the full json export of the same version, rendered the same way', goal: '≥ 20×', met: metInEveryRound(roundRatios({ ...answers, higherIsBetter: false }), 20),
    notes: `${share}; in-process renders (the export service a cache miss runs), no HTTP, no cache, each from a collected heap after one uncounted round of both (the process's first changes answer ${(warmUp.changes * 1000).toFixed(1)} ms, first full export ${(warmUp.full * 1000).toFixed(0)} ms); load average ${load}`,
  });
  const byteShare = bytes.changes / bytes.full;
  emitResult({
    figure: `changes since the previous version, json (${dialect}): bytes`,
    unit: 'bytes', higherIsBetter: false, ours: [bytes.changes], reference: [bytes.full],
    referenceName: 'the full json export', goal: '≤ 2 % of the full export (≥ 50×)', met: byteShare <= 0.02,
    notes: `${bytes.changes.toLocaleString('en')} of ${bytes.full.toLocaleString('en')} bytes = ${(byteShare * 100).toFixed(2)} %`,
  });
  const cost = median(publishing.ours.map((ours, i) => ours / publishing.reference[i]));
  emitResult({
    figure: `publication of ${ITEMS.toLocaleString('en')} items, 1 % changed, with its changes recorded (${dialect})`,
    unit: 's', higherIsBetter: false, ours: publishing.ours, reference: publishing.reference,
    referenceName: 'the publication as it was: less the recording statements, plus the one-join count the guard ran before (both timed on the same two lists)',
    goal: '≥ 0.91× (extra cost ≤ 10 %)', met: metInEveryRound(publishing.ours.map((ours, i) => ours / publishing.reference[i]), 1.1, false),
    notes: `extra cost median ${((cost - 1) * 100).toFixed(1)} %; load average ${load}`,
  });
} finally {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
}
