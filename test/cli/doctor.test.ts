import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runDoctor } from '../../src/cli/doctor.js';
import { findRecordsExtension } from '../../src/store/sqlite/records-extension.js';
import { copyRecordsModule } from '../../src/store/postgres/native-copy-records.js';
import { itemRowsModule } from '../../src/store/item-rows/native-item-rows.js';
import { freePort } from '../robustness/child-service.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/dialects.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const REDIS_URL = process.env.PRICE_EXPORT_TEST_REDIS_URL;

/** runDoctor in this process: its exit code and the lines it printed. */
async function doctor(env: Record<string, string>, cacheRoot: string): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await runDoctor({ env, cacheRoot, print: (line) => lines.push(line.trimEnd()) });
  return { code, lines };
}

const failures = (lines: string[]) => lines.filter((line) => line.startsWith('FAIL'));

describe('price-export doctor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'price-export-doctor-'));
  const privateCache = join(dir, 'cache');
  before(() => mkdirSync(privateCache, { mode: 0o700 }));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const dialect of DIALECTS) {
    describe(`on a good configuration (${dialect})`, () => {
      let testDb: TestDatabase;
      before(async () => { testDb = await createTestDatabase(dialect); });
      after(async () => testDb.drop());

      test('every check passes and the exit code is 0', async () => {
        const env: Record<string, string> = { DATABASE_URL: testDb.url, ...(REDIS_URL ? { REDIS_URL } : {}) };
        const { code, lines } = await doctor(env, privateCache);
        assert.deepEqual(failures(lines), []);
        assert.equal(code, 0, lines.join('\n'));
        assert.ok(lines.some((l) => /^ok\s+database: .*answers; its schema is up to date/.test(l)), lines.join('\n'));
        if (dialect === 'sqlite') assert.ok(lines.some((l) => /^ok\s+database: SQLite is in WAL mode/.test(l)));
        // Either way not a fault: which one is said (the C code is there when a C compiler was).
        const built = dialect === 'sqlite' ? findRecordsExtension() !== null : copyRecordsModule() !== null;
        const pages = built ? /^ok\s+database: CSV, TSV, JSON, XML and YML pages are built by the C records code/ : /^ok\s+database: CSV, TSV, JSON, XML and YML pages are built by SQL/;
        assert.ok(lines.some((l) => pages.test(l)), lines.join('\n'));
        const reader = itemRowsModule() !== null ? /^ok\s+database: JSON, NDJSON and CSV publications are read by the native item reader/ : /^ok\s+database: JSON, NDJSON and CSV publications are read by JavaScript/;
        assert.ok(lines.some((l) => reader.test(l)), lines.join('\n'));
        if (REDIS_URL) assert.ok(lines.some((l) => /^ok\s+redis: .* answers/.test(l)));
        assert.ok(lines.some((l) => /^ok\s+cache directory: .* is private to this user/.test(l)));
        assert.ok(lines.some((l) => /^ok\s+cache directory: .* is writable/.test(l)));
        assert.ok(lines.some((l) => /GiB free/.test(l)));
        assert.equal(lines.at(-1), 'Everything looks right.');
      });
    });
  }

  test('the cache directory checked is CACHE_DIR, with room for CACHE_MAX_MB', async () => {
    const lines: string[] = [];
    const env = { DATABASE_URL: `sqlite:${join(dir, 'none.db')}`, CACHE_DIR: privateCache, CACHE_MAX_MB: '16777216' };
    await runDoctor({ env, print: (line) => lines.push(line.trimEnd()) });
    assert.ok(lines.some((l) => l.startsWith('ok') && l.includes(`cache directory: ${privateCache} is private to this user`)), lines.join('\n'));
    assert.ok(failures(lines).some((l) => /cache directory: only .* GiB free where the cache may hold 16384 GiB \(CACHE_MAX_MB\)/.test(l)), lines.join('\n'));
  });

  test('a bad variable is named, and the exit code is 1', async () => {
    const { code, lines } = await doctor({ DATABASE_URL: `sqlite:${join(dir, 'none.db')}`, LOG_LEVEL: 'loud', ADMIN_TOKEN: 'short' }, privateCache);
    assert.equal(code, 1);
    assert.ok(failures(lines).some((l) => /configuration: LOG_LEVEL must be one of/.test(l)), lines.join('\n'));
    assert.ok(failures(lines).some((l) => /configuration: ADMIN_TOKEN must be at least 16 characters/.test(l)));
    assert.match(lines.at(-1)!, /^2 problem\(s\) found\.$/);
  });

  test('a missing SQLite file is reported (and not created), an unmigrated one says to migrate', async () => {
    const missing = join(dir, 'missing.db');
    const gone = await doctor({ DATABASE_URL: `sqlite:${missing}` }, privateCache);
    assert.equal(gone.code, 1);
    assert.ok(failures(gone.lines).some((l) => /does not exist; run "price-export migrate"/.test(l)), gone.lines.join('\n'));
    assert.equal(existsSync(missing), false);

    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    const behind = await doctor({ DATABASE_URL: `sqlite:${empty}` }, privateCache);
    assert.equal(behind.code, 1);
    assert.ok(failures(behind.lines).some((l) => /schema is behind by \d+ migration\(s\); run "price-export migrate"/.test(l)), behind.lines.join('\n'));
  });

  test('an unreachable PostgreSQL and Redis are reported without the password in the address', async () => {
    const [pgPort, redisPort] = [await freePort(), await freePort()];
    const { code, lines } = await doctor(
      { DATABASE_URL: `postgres://app:s3cret-pw@127.0.0.1:${pgPort}/prices`, REDIS_URL: `redis://:r3dis-pw@127.0.0.1:${redisPort}` },
      privateCache,
    );
    assert.equal(code, 1);
    assert.ok(failures(lines).some((l) => l.includes(`database: PostgreSQL at 127.0.0.1:${pgPort}/prices cannot be reached`)), lines.join('\n'));
    assert.ok(failures(lines).some((l) => l.includes(`redis: Redis at 127.0.0.1:${redisPort} does not answer`)), lines.join('\n'));
    assert.doesNotMatch(lines.join('\n'), /s3cret-pw|r3dis-pw/);
  });

  test('a cache directory others can write to, or that is not a directory, is reported', async () => {
    const shared = join(dir, 'shared-cache');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const good = { DATABASE_URL: `sqlite:${join(dir, 'missing.db')}` };
    const open = await doctor(good, shared);
    assert.ok(failures(open.lines).some((l) => /cache directory: .* is writable by other users \(mode 777\)/.test(l)), open.lines.join('\n'));

    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const notDir = await doctor(good, file);
    assert.ok(failures(notDir.lines).some((l) => /cache directory: .* is not a directory/.test(l)), notDir.lines.join('\n'));
  });

  test('the real command prints in plain words and exits 1 on a broken configuration', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'doctor'], {
      cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: `sqlite:${join(dir, 'never.db')}` },
    });
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stdout, /^FAIL {2}database: SQLite file .*never\.db does not exist/m);
    assert.match(result.stdout, /problem\(s\) found\.\n$/);
  });
});
