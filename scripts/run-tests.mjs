#!/usr/bin/env node
// `npm test`: runs every *.test.ts under src/ and test/ with Node's test runner.
// Suites that need PostgreSQL or Redis run when those answer and are skipped, said loudly,
// when they do not; PRICE_EXPORT_REQUIRE_SERVICES=1 (set by .ci/run) turns a skip into a failure.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

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

const filters = process.argv.slice(2);
const files = [...findTests(join(root, 'src')), ...findTests(join(root, 'test'))]
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();

const env = { ...process.env };
const skipped = [];
if (await reachable(PG_URL)) env.PRICE_EXPORT_TEST_PG_URL = PG_URL;
else skipped.push(`PostgreSQL suites (nothing answers at ${new URL(PG_URL).host}; set TEST_DATABASE_URL)`);
if (await reachable(REDIS_URL)) env.PRICE_EXPORT_TEST_REDIS_URL = REDIS_URL;
else skipped.push(`Redis suites (nothing answers at ${new URL(REDIS_URL).host}; set TEST_REDIS_URL)`);

for (const line of skipped) console.log(`SKIPPED: ${line}`);
if (skipped.length > 0 && process.env.PRICE_EXPORT_REQUIRE_SERVICES === '1') {
  console.error('PRICE_EXPORT_REQUIRE_SERVICES=1: a skipped suite is a failure here.');
  process.exit(1);
}

const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', ...files],
  { stdio: 'inherit', env, cwd: root },
);
for (const line of skipped) console.log(`SKIPPED: ${line}`);
process.exit(result.status ?? 1);
