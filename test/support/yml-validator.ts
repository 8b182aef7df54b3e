/*
 * Validates YML with real validators: Yandex's shops.dtd (test/fixtures/yandex-shops.dtd, with
 * `count` as the one addition), converted to RELAX NG by trang and checked by jing (Debian
 * packages `trang` and `jing`; .ci/run installs them).
 *
 * The DTD is converted here, once per test process, rather than checked in as a generated
 * .rng: trang takes a fraction of a second, and the DTD stays the one source (an edit to it
 * cannot leave a stale schema behind).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DTD = fileURLToPath(new URL('../fixtures/yandex-shops.dtd', import.meta.url));

/** A YML document to check, named so that jing's messages say which one failed. */
export interface YmlDocument {
  name: string;
  body: string | Uint8Array;
}

interface RunResult {
  exitCode: number;
  output: string;
}

/** Runs a command; a missing program fails with the package to install, not with ENOENT. */
function run(program: string, args: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if (error === null) return resolve({ exitCode: 0, output });
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return reject(new Error(`${program} is not installed: the YML tests validate with it (apt-get install -y trang jing; .ci/run installs them)`));
      }
      const exitCode = typeof error.code === 'number' ? error.code : -1;
      resolve({ exitCode, output: output || error.message });
    });
  });
}

let workDir: Promise<string> | null = null;
let schema: Promise<string> | null = null;

function scratch(): Promise<string> {
  workDir ??= mkdtemp(join(tmpdir(), 'price-export-yml-')).then((dir) => {
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  });
  return workDir;
}

/** The RELAX NG form of the fixture DTD, made by trang on first use. */
export function ymlSchema(): Promise<string> {
  schema ??= scratch().then(async (dir) => {
    const rng = join(dir, 'yandex-shops.rng');
    const { exitCode, output } = await run('trang', ['-I', 'dtd', '-O', 'rng', DTD, rng]);
    if (exitCode !== 0) throw new Error(`trang could not convert ${DTD}:\n${output}`);
    return rng;
  });
  return schema;
}

let sequence = 0;

/** jing's messages for these documents (one run for all of them); empty when every one is valid. */
export async function jingMessages(documents: readonly YmlDocument[]): Promise<string[]> {
  const rng = await ymlSchema();
  const dir = await scratch();
  const files = await Promise.all(
    documents.map(async (document) => {
      const file = join(dir, `${++sequence}-${document.name.replace(/[^\w.-]+/g, '_')}.yml`);
      await writeFile(file, document.body);
      return file;
    }),
  );
  const { exitCode, output } = await run('jing', [rng, ...files]);
  const messages = output.split('\n').filter((line) => line.trim() !== '');
  if (exitCode !== 0 && messages.length === 0) return [`jing exited with ${exitCode} and said nothing`];
  return messages;
}

/** Fails, quoting jing, unless every document is valid against Yandex's shops.dtd (+ count). */
export async function assertValidYml(...documents: YmlDocument[]): Promise<void> {
  const messages = await jingMessages(documents);
  // jing lists every element it would accept; the first lines, cut short, say enough.
  const shown = messages.slice(0, 8).map((line) => (line.length > 300 ? `${line.slice(0, 300)}…` : line));
  assert.deepEqual(messages, [], `jing rejects YML against test/fixtures/yandex-shops.dtd:\n${shown.join('\n')}`);
}
