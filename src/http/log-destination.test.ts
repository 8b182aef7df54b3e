import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import pino from 'pino';
import { until } from '../../test/support/until.js';
import { gatheredLines, LOG_GATHER_MS, type Later } from './log-destination.js';

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

/** A clock of the test's own: the gathering timers it was asked for, fired when the test says. */
function heldTimers() {
  const asked: { run: () => void; ms: number; cancelled: boolean }[] = [];
  const later: Later = (run, ms) => {
    const timer = { run, ms, cancelled: false };
    asked.push(timer);
    return () => { timer.cancelled = true; };
  };
  return { asked, later };
}

const linesIn = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

test('a quiet log gathers its lines for one timer and writes them when it fires, not before', async () => {
  const file = join(dir, 'gathered.log');
  const fd = openSync(file, 'w');
  const { asked, later } = heldTimers();
  const log = pino({ base: null, timestamp: false }, gatheredLines(fd, later));
  for (let i = 0; i < 3; i++) log.info({ i, text: text(i + 1) });
  assert.deepEqual(asked.map((t) => t.ms), [LOG_GATHER_MS], 'one timer for the three lines');
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(readFileSync(file, 'utf8'), '', 'nothing written before the timer fires');
  asked[0].run();
  await until('the three lines written', () => linesIn(file) === 3);
  log.info({ i: 3, text: text(4) });
  assert.equal(asked.length, 2, 'the next line waits for a timer of its own');
  asked[1].run();
  await until('the fourth line written', () => linesIn(file) === 4);
  closeSync(fd);
  assertLines(file, 4, (i) => text(i + 1));
});

test('a busy log writes 16 KiB of lines at once, without waiting for its timer', async () => {
  const file = join(dir, 'busy.log');
  const fd = openSync(file, 'w');
  const { asked, later } = heldTimers();
  const log = pino({ base: null, timestamp: false }, gatheredLines(fd, later));
  const count = 200; // ~100 bytes a line: past 16 KiB
  for (let i = 0; i < count; i++) log.info({ i, text: `товар №${i}`.padEnd(60, '.') });
  await until('the lines past 16 KiB written', () => linesIn(file) > 0);
  assert.ok(asked.length >= 2 && asked.slice(0, -1).every((timer) => timer.cancelled), 'the timers of what went out at 16 KiB are cancelled');
  asked.at(-1)!.run(); // the rest waited for the last one
  await until('every line written', () => linesIn(file) === count);
  closeSync(fd);
  assertLines(file, count, (i) => `товар №${i}`.padEnd(60, '.'));
});
