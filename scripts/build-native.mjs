#!/usr/bin/env node
// Part of `npm run build` (so of `npm install` too): compiles the SQLite extension that builds
// CSV/TSV, JSON, XML and YML pages (src/store/sqlite/native/*.c) into build/native/, against the SQLite
// headers better-sqlite3 ships, with the C compiler better-sqlite3 itself was built with ($CC or cc).
//
// It is optional: without a compiler the store builds the same records with SQL, slower
// (bench/RESULTS.md). So a failure here is a warning, not a failed install, unless
// PRICE_EXPORT_REQUIRE_NATIVE=1 (CI, where the tests must cover it).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const sourceDir = join(root, 'src/store/sqlite/native');
const sources = readdirSync(sourceDir).filter((name) => name.endsWith('.c')).map((name) => join(sourceDir, name));
const out = join(root, 'build/native/price_export_records.so');
const required = process.env.PRICE_EXPORT_REQUIRE_NATIVE === '1';

function give(reason) {
  const message = `price-export: the SQLite records extension was not built (${reason}); CSV, TSV, JSON, XML and YML pages are built by SQL instead, slower`;
  if (required) {
    console.error(`${message}. PRICE_EXPORT_REQUIRE_NATIVE=1: failing.`);
    process.exit(1);
  }
  console.warn(message);
  process.exit(0);
}

if (process.platform === 'win32') give('no build for Windows');
let headers;
try {
  headers = join(dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')), 'deps/sqlite3');
} catch {
  give('better-sqlite3 is not installed');
}
mkdirSync(dirname(out), { recursive: true });
const partial = `${out}.${process.pid}`;
const shared = process.platform === 'darwin' ? ['-dynamiclib'] : ['-shared', '-fPIC'];
const compiler = process.env.CC || 'cc';
const built = spawnSync(compiler, ['-O2', ...shared, `-I${headers}`, ...sources, '-o', partial], { stdio: ['ignore', 'inherit', 'inherit'] });
if (built.error || built.status !== 0) {
  rmSync(partial, { force: true });
  give(built.error ? `${compiler}: ${built.error.message}` : `${compiler} exited with ${built.status}`);
}
// Renamed into place: a server running from this checkout may have the old file loaded.
renameSync(partial, out);
