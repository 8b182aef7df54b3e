/*
 * CONTRACT §10's costs on one machine, for SQLite and PostgreSQL:
 * - the guard: the database's one-pass diff of a new N-item list against the latest (counts and
 *   first offenders), as a share of the whole publication;
 * - rollback of an N-item list: until the new version is the latest that another connection
 *   (another instance) reads, and the diff computed after it;
 * - history on disk: the database's growth per retained N-item version.
 *
 *   node --import tsx bench/versions.ts [items] [postgres://admin-url]
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DEFAULT_GUARD } from '../src/model/versions.js';
import { judge } from '../src/domain/guard.js';
import type { SourceRow } from '../src/domain/publication-source.js';
import { publishPriceList } from '../src/domain/publishing.js';
import { createStore } from '../src/domain/stores.js';
import { rollback } from '../src/domain/versions.js';
import { openDatabase } from '../src/store/factory.js';
import type { Database } from '../src/store/types.js';
import { rawItem } from './bench-data.js';

const COUNT = Number(process.argv[2] ?? 1_000_000);
const PG_ADMIN = process.argv[3] ?? process.env.PRICE_EXPORT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The catalogue; in the second list every 100th price is 10 % lower (a normal repricing). */
async function* rows(repriced: boolean): AsyncGenerator<SourceRow> {
  for (let i = 0; i < COUNT; i++) {
    const raw = rawItem(i);
    if (repriced && i % 100 === 0) raw.price = (Number(raw.price) * 0.9).toFixed(2);
    yield { position: `item ${i}`, raw, text: false };
  }
}

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

async function measure(label: string, url: string, other: () => Promise<Database>, size: () => Promise<number>): Promise<void> {
  const db = await openDatabase(url);
  await db.migrate();
  await createStore(db, { id: 'bench', name: 'Bench' });
  const empty = await size();

  let start = process.hrtime.bigint();
  const v1 = await publishPriceList(db, 'bench', rows(false));
  const firstSeconds = seconds(start);
  const oneVersion = await size();

  start = process.hrtime.bigint();
  const v2 = await publishPriceList(db, 'bench', rows(true));
  const secondSeconds = seconds(start);
  const twoVersions = await size();
  // The guard's share of that publication: the same comparison, timed alone.
  start = process.hrtime.bigint();
  const diff = await judge(db, v2.items_list_id, v1, DEFAULT_GUARD);
  const guardSeconds = seconds(start);

  // Rollback: visible to another connection (as to another instance) at its commit.
  const reader = await other();
  start = process.hrtime.bigint();
  const change = db.versions.rollback('bench', v1.version, 10);
  const list = (await change)!;
  const visible = (await reader.priceLists.latest('bench'))!;
  const visibleSeconds = seconds(start);
  if (visible.version !== list.version) throw new Error('the rollback is not visible to another connection');
  start = process.hrtime.bigint();
  const full = await rollback(db, 'bench', v2.version, 10);
  const fullSeconds = seconds(start);
  await reader.close();
  await db.close();

  console.log(`${label}, ${COUNT.toLocaleString('en-US')} items`);
  console.log(`  publish v1 (no latest)           ${firstSeconds.toFixed(2)} s`);
  console.log(`  publish v2 (guard on, 1 % repriced) ${secondSeconds.toFixed(2)} s; its diff alone ${guardSeconds.toFixed(2)} s -> guard ${(secondSeconds / (secondSeconds - guardSeconds)).toFixed(3)}x (${diff.verdict}, price_down ${diff.price_down})`);
  console.log(`  rollback visible to another connection ${(visibleSeconds * 1000).toFixed(0)} ms; with its diff ${fullSeconds.toFixed(2)} s (v${full.list.version})`);
  console.log(`  database: empty ${mib(empty)}, one version ${mib(oneVersion)}, two ${mib(twoVersions)} -> ${mib(twoVersions - oneVersion)} per retained version`);
}

const dir = mkdtempSync(join(tmpdir(), 'price-export-bench-versions-'));
try {
  const file = join(dir, 'bench.db');
  const fileSize = async () => ['', '-wal'].reduce((sum, suffix) => { try { return sum + statSync(file + suffix).size; } catch { return sum; } }, 0);
  await measure('SQLite', `sqlite:${file}`, () => openDatabase(`sqlite:${file}`), async () => {
    // Checkpointed first, so the figure is the database file's own size.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    return fileSize();
  });

  const name = `pe_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  try {
    await measure('PostgreSQL', url.toString(), () => openDatabase(url.toString()), async () => {
      const { rows } = await admin.query('SELECT pg_database_size($1) AS size', [name]);
      return Number(rows[0].size);
    });
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
