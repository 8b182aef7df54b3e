#!/usr/bin/env node
// `npm test`: runs every *.test.ts under src/ and test/ with Node's test runner.
// `npm test -- --tier unit` (npm run test:unit, test:store, test:http, test:system) runs one tier;
// other arguments keep the files whose path contains one of them.
// Suites that need PostgreSQL or Redis run when those answer and are skipped, said loudly,
// when they do not; PRICE_EXPORT_REQUIRE_SERVICES=1 (set by .ci/run) turns a skip into a failure.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function findTests(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

function reachable(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => { socket.end(); resolve(true); });
    socket.on('error', () => resolve(false));
    socket.setTimeout(2000, () => { socket.destroy(); resolve(false); });
  });
}

/**
 * The tiers, by location (README "Tests"). The first match wins; a test file in no tier is an
 * error, so a new test is placed on purpose.
 * - unit: pure functions and writers in memory; no database, no network, no child process, no
 *   sleep; the whole tier runs in a few seconds.
 * - store: the storage contract, on every dialect this run reaches.
 * - http: the real apps over inject() or a port, on a real database; the render cache.
 * - system: child processes (the CLI, the service, two instances), Redis, Chromium, and the
 *   third-party readers (LibreOffice, openpyxl) of what the writers produce.
 */
const TIERS = {
  // Writer tests that hand their output to a third-party validator in a child process (jing,
  // xmllint) are system tests; the rest of the tests beside the code are pure.
  unit: ['test/unit/', /^src\/(domain|formats|model|http|metrics|render-cache)\/(?!yml\.test|commerceml\.test)[^/]+\.test\.ts$/],
  // test/versions: CONTRACT §10's history, guard, quarantine and rollback through the domain, on every dialect.
  store: ['src/store/', 'test/domain/', 'test/versions/'],
  http: ['test/http/', 'test/admin/', 'test/cache/', 'test/operations/'],
  system: ['test/cli/', 'test/changes/', 'test/robustness/', 'test/multi-instance/', 'test/browser/', 'src/formats/xlsx/', 'src/formats/yml.test.ts', 'src/formats/commerceml.test.ts', 'test/deliveries/'],
};

function tierOf(relative) {
  for (const [tier, places] of Object.entries(TIERS)) {
    if (places.some((place) => (typeof place === 'string' ? relative.startsWith(place) : place.test(relative)))) return tier;
  }
  return null;
}

const args = process.argv.slice(2);
const tierAt = args.indexOf('--tier');
const tier = tierAt >= 0 ? args[tierAt + 1] : null;
if (tierAt >= 0 && !(tier in TIERS)) {
  console.error(`--tier takes one of: ${Object.keys(TIERS).join(', ')}`);
  process.exit(2);
}
const filters = args.filter((_, i) => tierAt < 0 || (i !== tierAt && i !== tierAt + 1));
const all = [...findTests(join(root, 'src')), ...findTests(join(root, 'test'))].map((file) => relative(root, file));
const untiered = all.filter((file) => tierOf(file) === null);
if (untiered.length > 0) {
  console.error(`test files in no tier (add their folder to TIERS in scripts/run-tests.mjs):\n  ${untiered.join('\n  ')}`);
  process.exit(2);
}
const files = all
  .filter((file) => tier === null || tierOf(file) === tier)
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();

const env = { ...process.env };
const skipped = [];
// The unit tier needs no service, and is not handed one: a unit test that reached for a database would fail.
if (tier !== 'unit') {
  if (await reachable(PG_URL)) env.PRICE_EXPORT_TEST_PG_URL = PG_URL;
  else skipped.push(`PostgreSQL suites (nothing answers at ${new URL(PG_URL).host}; set TEST_DATABASE_URL)`);
  if (await reachable(REDIS_URL)) env.PRICE_EXPORT_TEST_REDIS_URL = REDIS_URL;
  else skipped.push(`Redis suites (nothing answers at ${new URL(REDIS_URL).host}; set TEST_REDIS_URL)`);
  // Built by `npm run build` (scripts/build-native.mjs) where a C compiler is; without it only the SQL records are tested.
  if (!existsSync(join(root, 'build/native/price_export_records.so'))) skipped.push('SQLite records by the C extension (build/native/ was not built: `npm run build` needs a C compiler)');
  if (!existsSync(join(root, 'build/native/price_export_copy_records.node'))) {
    skipped.push("PostgreSQL records by the C module (build/native/ has none: `npm run build` needs a C compiler and Node's include/node)");
  }
}

for (const line of skipped) console.log(`SKIPPED: ${line}`);
if (skipped.length > 0 && process.env.PRICE_EXPORT_REQUIRE_SERVICES === '1') {
  console.error('PRICE_EXPORT_REQUIRE_SERVICES=1: a skipped suite is a failure here.');
  process.exit(1);
}

// The unit tier is pure, so its files share one process: a few seconds instead of one tsx start per file.
const command = tier === 'unit'
  ? ['--import', 'tsx', '--input-type=module', '-e', files.map((file) => `await import(${JSON.stringify(pathToFileURL(join(root, file)).href)});`).join('\n')]
  : ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', ...files];
const result = spawnSync(process.execPath, command, { stdio: 'inherit', env, cwd: root });
for (const line of skipped) console.log(`SKIPPED: ${line}`);
process.exit(result.status ?? 1);
