import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = ['--import', 'tsx', 'src/cli/index.ts'];

export { freePort } from '../support/free-port.js';

/** An empty PostgreSQL database (no schema: the instances migrate it themselves, at once), and how to drop it. */
export async function createEmptyDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const name = `pe_multi_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try { await client.query(sql); } finally { await client.end(); }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** Only what the service reads, plus what Node needs to run: no DATABASE_URL or BASE_PATH leaks in from the caller's shell. */
function serviceEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...env };
}

export interface ServerProcess {
  base: string;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `price-export serve` as a real process, resolved once it answers HTTP on `port` and on each
 * of `alsoPorts` (the admin API listens after the public one).
 */
export async function startServer(port: number, env: Record<string, string>, alsoPorts: number[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...CLI, 'serve'], { cwd: ROOT, env: serviceEnv({ ...env, PORT: String(port), HOST: '127.0.0.1' }), stdio: ['ignore', 'pipe', 'pipe'] });
  LIVE.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => { output += chunk; });
  child.stderr!.on('data', (chunk) => { output += chunk; });
  const base = `http://127.0.0.1:${port}`;
  const server: ServerProcess = { base, child, output: () => output, stop: () => stopProcess(child) };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve on port ${port} exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`serve on port ${port} did not answer within 60 s:\n${output}`);
    }
    try {
      // Any answer (a 401) means it listens.
      for (const p of [port, ...alsoPorts]) await fetch(`http://127.0.0.1:${p}/`);
      return server;
    } catch {
      await sleep(200);
    }
  }
}

/** SIGTERM (the graceful path), then SIGKILL if it has not exited after 10 s. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  LIVE.delete(child);
}

/** Children still running when the test process leaves (a crash, a cancelled run) are killed, never left behind. */
const LIVE = new Set<ChildProcess>();
process.on('exit', () => { for (const child of LIVE) child.kill('SIGKILL'); });

/** One `price-export …` command against the same configuration; rejects on a non-zero exit. */
export async function runCli(args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [...CLI, ...args], { cwd: ROOT, env: serviceEnv(env), timeout: 60_000 });
}
