/**
 * #20 finding 21: the demo key is printed for the person at the terminal on standard error,
 * apart from the JSON log lines on standard output (which a log collector keeps).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT } from './child-service.js';

const dir = mkdtempSync(join(tmpdir(), 'price-export-demo-out-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('npm start on an empty database: the demo key on stderr only; stdout holds JSON log lines without it', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: `sqlite:${join(dir, 'demo.db')}`, PORT: '0', HOST: '127.0.0.1', CACHE_DIR: join(dir, 'cache'), NODE_ENV: 'development' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // The banner ends with the builder's address, on whichever stream it is printed.
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (/Export-link builder/.test(stdout)) resolve();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (/Export-link builder/.test(stderr)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the service exited (${code}) before printing the demo key: ${stderr}`)));
  });
  child.kill('SIGTERM');
  await exited;

  const key = /Demo API key \(shown once\):\n\s+(pex_[0-9A-Za-z]{36})/.exec(stderr)?.[1];
  assert.ok(key, `the demo key is on stderr: ${stderr}`);
  assert.ok(!stdout.includes(key) && !stdout.includes(key.slice(4)), 'the key is not on stdout');
  for (const line of stdout.split('\n').filter((l) => l !== '')) assert.doesNotThrow(() => JSON.parse(line), `stdout holds only JSON log lines: ${line}`);
});
