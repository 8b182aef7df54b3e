/**
 * CONTRACT §10 on the real command line: the guard's commands, a held publication released and
 * another discarded, quarantine shown and released, rollback and versions; bad input exits 1
 * with a message naming the problem, and changes nothing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'price-export-versions-cli-'));
const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, NODE_ENV: 'test', HISTORY_VERSIONS: '3' };

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { cwd: root, env, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A list file of items S0…S(n-1) at 100.00, with prices overridden by offer_id. */
function list(name: string, count: number, prices: Record<string, string> = {}): string {
  const file = join(dir, name);
  writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({ offer_id: `S${i}`, name: `Item ${i}`, price: prices[`S${i}`] ?? '100.00' })).join('\n'));
  return file;
}

const versionsOf = () => (JSON.parse(cli('versions', '--store', 'vshop', '--json').stdout) as { version: number; state: string; source: string }[]).map((v) => `${v.version}:${v.state}:${v.source}`);

describe('versions on the command line', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('guard show and set; a value out of range exits 1 naming it, and nothing changes', () => {
    assert.equal(cli('store', 'create', '--id', 'vshop', '--name', 'V').code, 0);
    assert.match(cli('guard', 'show', '--store', 'vshop').stdout, /max_removed_pct\s+20\nmax_price_drop_pct\s+50\nmax_price_rise_pct\s+100\nmin_items\s+1\nzero_price\s+hold/);
    const bad = cli('guard', 'set', '--store', 'vshop', '--max-price-drop-pct', '150');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /invalid_guard: max_price_drop_pct must be a whole number from 0 to 100/);
    assert.equal(cli('guard', 'set', '--store', 'vshop', '--min-items', '2').code, 0);
    assert.deepEqual(JSON.parse(cli('guard', 'show', '--store', 'vshop', '--json').stdout).min_items, 2);
    assert.equal(cli('guard', 'set', '--store', 'no-such', '--min-items', '2').code, 1);
  });

  test('a held publication is released; another is discarded', () => {
    assert.equal(cli('publish', '--store', 'vshop', list('v1.ndjson', 10)).code, 0);
    const held = cli('publish', '--store', 'vshop', list('v2.ndjson', 5), '--json');
    assert.equal(held.code, 1);
    const answer = JSON.parse(held.stdout);
    assert.deepEqual([answer.version, answer.state, answer.diff.verdict, answer.diff.removed], [2, 'held', 'held', 5]);
    assert.deepEqual(versionsOf(), ['2:held:publish', '1:latest:publish']);
    const notHeld = cli('publication', 'release', '--store', 'vshop', '--version', '1');
    assert.equal(notHeld.code, 1);
    assert.match(notHeld.stderr, /version_not_held/);
    assert.match(cli('publication', 'release', '--store', 'vshop', '--version', '2').stdout, /^version 2: published/);
    assert.deepEqual(versionsOf(), ['2:latest:publish', '1:retained:publish']);

    assert.equal(cli('publish', '--store', 'vshop', list('v3.ndjson', 1)).code, 1);
    assert.equal(cli('publication', 'discard', '--store', 'vshop', '--version', '3').stdout, 'discarded version 3\n');
    assert.deepEqual(versionsOf(), ['2:latest:publish', '1:retained:publish']);
    assert.match(cli('publication', 'discard', '--store', 'vshop', '--version', '3').stderr, /version_not_found/);
  });

  test('quarantine show and release, of some and of all', () => {
    const published = cli('publish', '--store', 'vshop', list('v4.ndjson', 5, { S0: '1.00', S1: '0', S2: '900.00' }));
    assert.equal(published.code, 0, published.stderr);
    assert.match(published.stdout, /^version 4: published with quarantined items, compared with version 2\n/);
    assert.match(published.stdout, /price drop: 1 items drop by more than 50 %\n\s+offer_id\s+old\s+new\n\s+S0\s+100\.00\s+1\.00\n/);
    assert.match(cli('quarantine', 'show', '--store', 'vshop').stdout, /^3 quarantined item\(s\)\nS0\tprice_drop\t100\.00\t->\t1\.00\nS1\tzero_price/);
    const unknown = cli('quarantine', 'release', '--store', 'vshop', '--offer', 'S4');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /not_quarantined: .*S4/);
    assert.notEqual(cli('quarantine', 'release', '--store', 'vshop').code, 0); // bad usage
    assert.match(cli('quarantine', 'release', '--store', 'vshop', '--offer', 'S0', '--offer', 'S1').stdout, /^version 5: published, compared with version 4\n/);
    assert.equal(JSON.parse(cli('quarantine', 'show', '--store', 'vshop', '--json').stdout).count, 1);
    assert.equal(JSON.parse(cli('quarantine', 'release', '--store', 'vshop', '--all', '--json').stdout).version, 6);
  });

  test('rollback to the previous and to an older version; HISTORY_VERSIONS=3 keeps three', () => {
    assert.match(cli('rollback', '--store', 'vshop').stdout, /^version 7: rollback to version 5, compared with version 6\n/);
    assert.deepEqual(versionsOf(), ['7:latest:rollback', '6:retained:publish', '5:retained:publish']);
    const gone = cli('rollback', '--store', 'vshop', '--to', '2');
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /version_not_found: .*no version 2/);
    assert.equal(JSON.parse(cli('rollback', '--store', 'vshop', '--to', '5', '--json').stdout).source, 'rollback');
    assert.deepEqual(versionsOf(), ['8:latest:rollback', '7:retained:rollback', '6:retained:publish']);
    assert.notEqual(cli('rollback', '--store', 'vshop', '--to', 'x').code, 0); // bad usage
  });
});
