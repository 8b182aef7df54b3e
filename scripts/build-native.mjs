#!/usr/bin/env node
// Part of `npm run build` (so of `npm install` too): compiles into build/native/, with the C
// compiler better-sqlite3 itself was built with ($CC or cc),
// - the SQLite extension that builds CSV/TSV, JSON, XML and YML pages
//   (src/store/sqlite/native/*.c), against the SQLite headers better-sqlite3 ships;
// - the Node-API module that runs the same aggregates over PostgreSQL's COPY
//   (src/store/postgres/native/*.c with those sources), against the Node-API headers
//   Node installs beside itself (include/node);
// - the Node-API module that reads a publication's items straight into rows
//   (src/store/item-rows/native/*.c), against the same Node-API headers.
//
// Both are optional: without them the store builds the same records with SQL, slower
// (bench/RESULTS.md). So a failure here is a warning, not a failed install, unless
// PRICE_EXPORT_REQUIRE_NATIVE=1 (CI, where the tests must cover them).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const sqliteSources = join(root, 'src/store/sqlite/native');
const sources = readdirSync(sqliteSources).filter((name) => name.endsWith('.c')).map((name) => join(sqliteSources, name));
const required = process.env.PRICE_EXPORT_REQUIRE_NATIVE === '1';
const compiler = process.env.CC || 'cc';
let failed = false;

function give(what, reason, instead = 'those pages are built by SQL instead') {
  const message = `price-export: ${what} was not built (${reason}); ${instead}, slower`;
  if (required) {
    console.error(`${message}. PRICE_EXPORT_REQUIRE_NATIVE=1: failing.`);
    failed = true;
  } else {
    console.warn(message);
  }
}

/** Compiles `inputs` into build/native/`file`; false (with the warning) when it cannot. */
function compile(what, file, flags, inputs, instead) {
  const out = join(root, 'build/native', file);
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.${process.pid}`;
  const built = spawnSync(compiler, ['-O2', ...flags, ...inputs, '-o', partial], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.error || built.status !== 0) {
    rmSync(partial, { force: true });
    give(what, built.error ? `${compiler}: ${built.error.message}` : `${compiler} exited with ${built.status}`, instead);
    return;
  }
  // Renamed into place: a server running from this checkout may have the old file loaded.
  renameSync(partial, out);
}

function build() {
  if (process.platform === 'win32') return give('the C records code', 'no build for Windows');
  let sqliteHeaders;
  try {
    sqliteHeaders = join(dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')), 'deps/sqlite3');
  } catch {
    return give('the C records code', 'better-sqlite3 is not installed');
  }
  const shared = process.platform === 'darwin' ? ['-dynamiclib'] : ['-shared', '-fPIC'];
  compile('the SQLite records extension', 'price_export_records.so', [...shared, `-I${sqliteHeaders}`], sources);

  const nodeHeaders = join(dirname(dirname(process.execPath)), 'include/node');
  if (!existsSync(join(nodeHeaders, 'node_api.h'))) return give('the PostgreSQL records module', `no Node-API headers in ${nodeHeaders}`);
  // Hidden symbols, bound inside the module: SQLite loads the extension, built from the same
  // sources, into the same process with RTLD_GLOBAL, and its symbols must not stand in for these.
  const module = process.platform === 'darwin' ? ['-bundle', '-undefined', 'dynamic_lookup'] : ['-shared', '-fPIC', '-Wl,-Bsymbolic'];
  // PRICE_EXPORT_COPY_VALUES: the aggregates read the module's values in place (postgres/native/copy_values.h).
  const moduleSources = join(root, 'src/store/postgres/native');
  const flags = [...module, '-fvisibility=hidden', '-DPRICE_EXPORT_COPY_VALUES', `-I${moduleSources}`, `-I${sqliteHeaders}`, `-I${nodeHeaders}`];
  const moduleFiles = readdirSync(moduleSources).filter((name) => name.endsWith('.c')).map((name) => join(moduleSources, name));
  compile('the PostgreSQL records module', 'price_export_copy_records.node', flags, [...sources, ...moduleFiles]);

  const itemSources = join(root, 'src/store/item-rows/native');
  const itemFiles = readdirSync(itemSources).filter((name) => name.endsWith('.c')).map((name) => join(itemSources, name));
  compile('the native item reader', 'price_export_item_rows.node', [...module, '-fvisibility=hidden', `-I${nodeHeaders}`], itemFiles, 'publications are read by JavaScript instead');
}

build();
if (failed) process.exit(1);
