import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { keyShape } from '../../src/domain/api-key.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'price-export-cli-'));
const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, NODE_ENV: 'test' };

function cli(args: string[], extraEnv: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { cwd: root, env: { ...env, ...extraEnv }, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the command line', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));
  let keyValue = '';

  test('store create, then a duplicate is refused with a non-zero exit', () => {
    assert.deepEqual(cli(['store', 'create', '--id', 'cli-shop', '--name', 'CLI Shop', '--url', 'https://cli.example']).stdout, 'cli-shop\n');
    const again = cli(['store', 'create', '--id', 'cli-shop', '--name', 'Again']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /store_exists/);
  });

  test('key issue prints only the new key on stdout', () => {
    const result = cli(['key', 'issue', '--store', 'cli-shop', '--label', 'site']);
    assert.equal(result.code, 0, result.stderr);
    keyValue = result.stdout.trim();
    assert.equal(result.stdout, `${keyValue}\n`);
    assert.equal(keyShape(keyValue), 'new');
  });

  test('key list shows ids, labels and prefixes, never values', () => {
    const json = cli(['key', 'list', '--store', 'cli-shop', '--json']);
    const keys = JSON.parse(json.stdout);
    assert.equal(keys.length, 1);
    assert.equal(keys[0].label, 'site');
    assert.ok(keyValue.startsWith(keys[0].prefix));
    const table = cli(['key', 'list', '--store', 'cli-shop']);
    for (const output of [json.stdout, table.stdout]) assert.ok(!output.includes(keyValue.slice(8)));
    assert.match(table.stdout, /^id\tlabel\tprefix/);
  });

  test('profile put takes the sample profile and prints its id; replacing keeps the id', () => {
    const file = join(root, 'test/fixtures/profile-sample.json');
    const created = cli(['profile', 'put', '--store', 'cli-shop', '--file', file]);
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    assert.match(id, /^\d+$/);
    assert.equal(cli(['profile', 'put', '--store', 'cli-shop', '--file', file, '--id', id]).stdout.trim(), id);
    const bad = join(dir, 'bad-profile.json');
    writeFileSync(bad, JSON.stringify({ name: '', columns: [{ field: 'nope', title: 'x' }], encoding: 'koi8-r' }));
    const refused = cli(['profile', 'put', '--store', 'cli-shop', '--file', bad]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /name must be a non-empty string/);
    assert.match(refused.stderr, /columns\[0\]\.field/);
    assert.match(refused.stderr, /encoding/);
  });

  test('publish reads JSON, NDJSON and CSV and prints the new version', () => {
    assert.equal(cli(['publish', '--store', 'cli-shop', join(root, 'test/fixtures/legacy-sample.json')]).stdout, '1\n');
    const ndjson = join(dir, 'list.ndjson');
    writeFileSync(ndjson, '{"offer_id":"N1","name":"One","price":1}\n\n{"offer_id":"N2","name":"Two","price":"2.50","quantity":3}\n');
    assert.equal(cli(['publish', '--store', 'cli-shop', ndjson]).stdout, '2\n');
    const csv = join(dir, 'list.csv');
    writeFileSync(csv, 'offer_id,name,price,available,attributes.color\r\nC1,"Comma, name",10.5,no,red\r\n');
    const result = cli(['publish', '--store', 'cli-shop', csv]);
    assert.equal(result.stdout, '3\n', result.stderr);
  });

  test('publish prints the feed check counts as warnings on stderr, still publishes, and keeps stdout the version', () => {
    const ndjson = join(dir, 'warned.ndjson');
    writeFileSync(ndjson, `${JSON.stringify({ offer_id: 'W1', name: 'W'.repeat(151), price: 96, old_price: 100, barcode: '12345678901' })}\n`);
    const result = cli(['publish', '--store', 'cli-shop', ndjson]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^\d+\n$/);
    assert.match(result.stderr, /warning: yml: 1 item\(s\) break "offer name at most 150 characters" \(offer_name_length\)/);
    assert.match(result.stderr, /warning: yml: 1 item\(s\) break "barcode of 8, 12 or 13 digits" \(barcode_digits\)/);
    assert.match(result.stderr, /warning: yml: 1 item\(s\) break "discount \(oldprice above price\) between 5 % and 95 %"/);
    assert.match(result.stderr, /warning: google: 1 item\(s\) break "g:gtin/);
    assert.doesNotMatch(result.stderr, /commerceml/);
  });

  test('a bad publication reports every bad row with its position, exits non-zero, and publishes nothing', () => {
    const ndjson = join(dir, 'bad.ndjson');
    writeFileSync(ndjson, '{"offer_id":"B1","name":"ok","price":1}\n{"offer_id":"B2","name":"x","price":1.505}\nnot json\n{"offer_id":"B1","name":"dup","price":1}\n');
    const result = cli(['publish', '--store', 'cli-shop', ndjson]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /invalid_publication: 3 bad row\(s\)/);
    assert.match(result.stderr, /line 2: price has more than two fractional digits/);
    assert.match(result.stderr, /line 3: not valid JSON/);
    assert.match(result.stderr, /line 4: offer_id "B1" repeats an earlier item/);
    const csv = join(dir, 'bad.csv');
    writeFileSync(csv, 'offer_id,name,prize\r\nX,y,1\r\n');
    const header = cli(['publish', '--store', 'cli-shop', csv]);
    assert.equal(header.code, 1);
    assert.match(header.stderr, /unknown column\(s\) "prize"/);
    assert.equal(cli(['publish', '--store', 'no-such', ndjson]).code, 1);
  });

  test('key revoke, and unknown ids and commands fail clearly', () => {
    const [keyId] = JSON.parse(cli(['key', 'list', '--store', 'cli-shop', '--json']).stdout).map((k: { id: string }) => k.id);
    const result = cli(['key', 'revoke', keyId]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^revoked ${keyId} at `));
    assert.equal(cli(['key', 'revoke', 'key_nope']).code, 1);
    const unknown = cli(['frobnicate']);
    assert.equal(unknown.code, 2, 'bad usage exits 2 (README "Command line")');
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
  });

  test('key import takes a predecessor key by value', () => {
    const result = cli(['key', 'import', '--store', 'cli-shop', '--value', 'old-site-key.2019~x']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^key_/);
    assert.equal(cli(['key', 'import', '--store', 'cli-shop', '--value', 'pex_not-legacy']).code, 1);
  });

  test('bad usage exits 2 before any database is created or migrated', () => {
    const untouched = join(dir, 'never-created.db');
    const url = { DATABASE_URL: `sqlite:${untouched}` };
    for (const args of [['key', 'list'], ['key', 'list', '--store'], ['key', 'list', '--shop', 'x'], ['publish', '--store', 'x'], ['store', 'create', '--id', 'x'], ['profile', 'put', '--store', 'x', '--file', 'p.json', '--id', '0'], ['migrate', '--now'], ['demo', 'please']]) {
      const result = cli(args, url);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /Usage: price-export/);
      assert.equal(existsSync(untouched), false, `${args.join(' ')} created the database`);
    }
  });

  test('bad configuration stops with a message naming each bad variable', () => {
    const result = cli(['migrate'], { PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' });
    assert.equal(result.code, 2);
    for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL']) assert.match(result.stderr, new RegExp(name));
  });

  test('demo creates a store, a key, a profile and a price list', () => {
    const result = cli(['demo']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(keyShape(result.stdout.trim()), 'new');
    assert.match(result.stderr, /WebApi\/CampaignDataLatestGet/);
  });
});
