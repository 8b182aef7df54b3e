import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../support/dialects.js';
import { createEmptyDatabase, freePort, runCli, startServer, type ServerProcess } from './processes.js';

/**
 * Key scopes, expiry and rotation (CONTRACT §15) across two real `serve` processes on one
 * database of each dialect: what the command line changes is seen by both on the next request
 * (SQLite: each process remembers key look-ups until another connection commits), and the
 * scopes outlive a restart.
 */
for (const dialect of DIALECTS) {
  describe(`key scopes on two instances and across a restart (${dialect})`, () => {
    let tmp: string;
    let env: Record<string, string>;
    let drop: (() => Promise<void>) | undefined;
    let a: ServerProcess;
    let b: ServerProcess;
    const keys: string[] = [];

    const code = async (response: Response) => (response.status === 200 ? 200 : `${response.status} ${(await response.json()).code}`);
    const latest = (server: ServerProcess, key: string, query = '') => fetch(`${server.base}/api/export/latest?key=${key}${query}`).then(code);
    const me = (server: ServerProcess, key: string) =>
      fetch(`${server.base}/api/me`, { headers: { authorization: `Basic ${Buffer.from(`fetcher:${key}`).toString('base64')}` } }).then(code);
    const cli = async (args: string[]) => (await runCli(args, env)).stdout.trim();

    before(async () => {
      tmp = mkdtempSync(join(tmpdir(), 'price-export-scopes-'));
      let url = `sqlite:${join(tmp, 'shared.db')}`;
      if (dialect === 'postgres') {
        const db = await createEmptyDatabase(process.env.PRICE_EXPORT_TEST_PG_URL!);
        url = db.url;
        drop = db.drop;
      }
      env = { DATABASE_URL: url, LOG_LEVEL: 'info', NODE_ENV: 'production', RATE_LIMIT_PER_MIN: '100000', AUTH_FAIL_LIMIT_PER_MIN: '100000' };
      await cli(['migrate']);
      await cli(['store', 'create', '--id', 'shop', '--name', 'Shop']);
      const file = join(tmp, 'items.ndjson');
      writeFileSync(file, '{"offer_id":"A","name":"Alpha","price":1}\n');
      await cli(['publish', '--store', 'shop', file]);
      const [portA, portB] = await Promise.all([freePort(), freePort()]);
      [a, b] = await Promise.all([startServer(portA, env), startServer(portB, env)]);
    });

    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      for (const server of [a, b]) for (const key of keys) assert.ok(!server?.output().includes(key), 'a key appeared in a server log');
      await drop?.();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    });

    test('a marketplace key opens only its feed on both instances; a change, a rotation and a restart are seen by the next request', async () => {
      const key = await cli(['key', 'issue', '--store', 'shop', '--label', 'market', '--addresses', 'prices', '--formats', 'yml']);
      keys.push(key);
      for (const server of [a, b]) {
        assert.equal(await latest(server, key, '&format=yml'), 200);
        assert.equal(await latest(server, key), '403 key_scope');
        assert.equal(await me(server, key), '403 key_scope');
      }
      // Warm both instances' remembered look-ups, then change the scope on the command line.
      const id = JSON.parse(await cli(['key', 'list', '--store', 'shop', '--json'])).find((k: { label: string }) => k.label === 'market').id;
      await cli(['key', 'update', id, '--addresses', 'prices,me', '--formats', 'all']);
      for (const server of [a, b]) {
        assert.equal(await latest(server, key), 200);
        assert.equal(await me(server, key), 200);
      }

      const rotated = await cli(['key', 'rotate', id, '--overlap', '0']);
      keys.push(rotated);
      for (const server of [a, b]) {
        assert.equal(await latest(server, key), '401 expired_key');
        assert.equal(await latest(server, rotated), 200);
        assert.equal(await fetch(`${server.base}/WebApi/SummaryExportLatestGet/${rotated}`).then(code), '403 key_scope');
      }

      await b.stop();
      b = await startServer(Number(new URL(b.base).port), env);
      assert.equal(await latest(b, rotated), 200);
      assert.equal(await me(b, rotated), 200);
      assert.equal(await fetch(`${b.base}/WebApi/SummaryExportLatestGet/${rotated}`).then(code), '403 key_scope');
      assert.equal(await latest(b, key), '401 expired_key');
    });
  });
}
