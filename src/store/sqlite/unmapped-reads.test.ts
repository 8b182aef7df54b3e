/**
 * The server's connections read the database with read(), never through a memory map of the
 * file. In WAL mode SQLite drops a connection's whole map of the file whenever another connection
 * has committed since its last read, so each page a look-up touched after any commit (a CLI
 * publication, another instance's, this process's own ledger batches) was mapped again: a page
 * fault a page, ~10 µs on some hosts. Measured in a publish storm (bench/RESULTS.md, "2026-12-07,
 * morning"): read() made the main connection's point reads 2–4× cheaper there.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { sqlDatabase } from '../sql/sql-database.js';
import { SqliteDialect } from './dialect.js';

/** The lines of this process's memory map that map exactly `path` (not its -wal or -shm files). */
const mappingsOf = (path: string): string[] => readFileSync('/proc/self/maps', 'utf8').split('\n').filter((line) => line.endsWith(` ${path}`));

test('no connection of the server maps the database file, also after another connection committed', { skip: process.platform !== 'linux' && '/proc/self/maps is Linux\'s' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'unmapped-reads-'));
  const path = join(dir, 'db.sqlite');
  const server = sqlDatabase(new SqliteDialect(path));
  try {
    await server.migrate();
    await server.stores.create({ id: 's', name: 'S', currency: 'RUB', url: null, company: null });
    assert.equal((await server.stores.get('s'))?.name, 'S');
    // Another connection's commit, as the CLI's or another instance's: the kind after which a
    // mapped connection maps its pages anew.
    const other = new Database(path);
    other.prepare("UPDATE stores SET name = 'T' WHERE id = 's'").run();
    // Its pages into the database file (a map holds the file's pages; the WAL's are always read()).
    other.pragma('wal_checkpoint(TRUNCATE)');
    other.close();
    assert.equal((await server.stores.get('s'))?.name, 'T');
    assert.deepEqual(mappingsOf(path), []);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
