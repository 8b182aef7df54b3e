/**
 * `price-export publish` with hostile files (issue #20: 1, 2): a refusal is exit 1 with the
 * position on stderr, never a stack trace, and the previous list stays latest; windows-1251
 * is read only when `--encoding windows-1251` says so.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';
import { openDatabase } from '../../src/store/factory.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'price-export-cli-hostile-'));
const databaseUrl = `sqlite:${join(dir, 'cli.db')}`;
const env = { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: 'test', MAX_FIELD_CHARS: '100', MAX_LINE_BYTES: '300' };

function cli(args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], { cwd: root, env, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
async function latestVersion(): Promise<number | undefined> {
  const db = await openDatabase(databaseUrl);
  try {
    return (await db.priceLists.latest('cli-hostile'))?.version;
  } finally {
    await db.close();
  }
}

describe('publish refuses hostile files with exit 1 and keeps the previous list', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));
  const cp1251 = iconv.encode('offer_id,name,price\r\nA1,Ноутбук,1990.50\r\n', 'win1251');

  test('set-up: a store with one good list', () => {
    assert.equal(cli(['store', 'create', '--id', 'cli-hostile', '--name', 'Hostile']).code, 0);
    const good = cli(['publish', '--store', 'cli-hostile', file('good.csv', 'offer_id,name,price\nA,a,1\n')]);
    assert.equal(good.code, 0, good.stderr);
  });

  test('#1 a record over MAX_LINE_BYTES and a field over MAX_FIELD_CHARS: exit 1, the line named, no stack trace', async () => {
    for (const [name, content, reason] of [
      ['long-line.csv', `offer_id,name,price\nB,"${'x'.repeat(400)}`, /line 2: longer than 300 bytes/],
      ['long-field.csv', `offer_id,name,price\nB,${'x'.repeat(101)},1\n`, /line 2: name longer than 100 characters/],
      ['long-line.ndjson', `{"offer_id":"B","name":"${'x'.repeat(400)}","price":1}\n`, /line 1: longer than 300 bytes/],
    ] as const) {
      const refused = cli(['publish', '--store', 'cli-hostile', file(name, content)]);
      assert.equal(refused.code, 1, `${name}: ${refused.stderr}`);
      assert.match(refused.stderr, reason);
      assert.doesNotMatch(refused.stderr, /\n\s+at /, 'no stack trace');
    }
    assert.equal(await latestVersion(), 1);
  });

  test('#2 a windows-1251 file is refused as UTF-8 with its position, and published with --encoding windows-1251', async () => {
    const path = file('cp1251.csv', cp1251);
    const refused = cli(['publish', '--store', 'cli-hostile', path]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /line 2: the file is not valid UTF-8 \(byte 25\)/);
    assert.equal(await latestVersion(), 1);

    const badUsage = cli(['publish', '--store', 'cli-hostile', '--encoding', 'koi8-r', path]);
    assert.ok(badUsage.code === 1 || badUsage.code === 2, badUsage.stderr); // bad usage: 2 once the CLI says so
    assert.match(badUsage.stderr, /--encoding must be utf-8 or windows-1251/);

    const published = cli(['publish', '--store', 'cli-hostile', '--encoding', 'windows-1251', path]);
    assert.equal(published.code, 0, published.stderr);
    assert.equal(await latestVersion(), 2);
  });
});
