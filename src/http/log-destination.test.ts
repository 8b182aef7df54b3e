import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import pino from 'pino';
import { gatheredLines } from './log-destination.js';

const dir = mkdtempSync(join(tmpdir(), 'log-destination-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The file's lines as pino wrote them: every `i` once, in order, with its text intact. */
function assertLines(file: string, count: number, text: (i: number) => string): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'the file ends with a whole line');
  assert.equal(lines.length, count);
  lines.forEach((line, i) => {
    const entry = JSON.parse(line) as { i: number; text: string };
    assert.equal(entry.i, i);
    assert.equal(entry.text, text(i));
  });
}

// Cyrillic, an emoji (two UTF-16 units, four bytes) and now and then a line longer than a whole write.
const text = (i: number) => (i % 997 === 0 ? 'цена '.repeat(5_000) : `товар №${i} 🛒`);

test('the log gathers lines as bytes and writes every one, whole and in order', () => {
  const file = join(dir, 'in-process.log');
  const fd = openSync(file, 'w');
  const destination = gatheredLines(fd);
  const log = pino({ base: null, timestamp: false }, destination);
  for (let i = 0; i < 20_000; i++) log.info({ i, text: text(i) });
  destination.flushSync();
  closeSync(fd);
  assertLines(file, 20_000, text);
});

test('lines still pending when the process exits are written', () => {
  const file = join(dir, 'exit.log');
  const script = `
    import { openSync } from 'node:fs';
    import pino from 'pino';
    import { gatheredLines } from ${JSON.stringify(new URL('./log-destination.ts', import.meta.url).href)};
    const log = pino({ base: null, timestamp: false }, gatheredLines(openSync(${JSON.stringify(file)}, 'w')));
    const text = ${text.toString()};
    for (let i = 0; i < 20_000; i++) log.info({ i, text: text(i) });
    process.exit(0);
  `;
  execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: new URL('../..', import.meta.url).pathname });
  assertLines(file, 20_000, text);
});
