/**
 * Helpers for the robustness suites that run the real service as child processes: start
 * `serve` and CLI commands, capture every line they print (for the key-leak check), talk
 * HTTP to them, and put a TCP proxy between the service and its database to cut it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';

export const ROOT = new URL('../../', import.meta.url).pathname;
const CLI = 'src/cli/index.ts';

/** Every line a child printed; `secret` marks the intended one-time output of `key issue`. */
export interface OutputLine {
  source: string;
  text: string;
  secret: boolean;
}
export const CHILD_OUTPUT: OutputLine[] = [];

/** Children still running; a failed test must not leave one holding the test process open. */
const RUNNING = new Set<ChildProcess>();

function track(child: ChildProcess): ChildProcess {
  RUNNING.add(child);
  child.once('exit', () => RUNNING.delete(child));
  return child;
}

/** SIGKILLs every child this file started that still runs (for `after` hooks). */
export function killStrayChildren(): void {
  for (const child of RUNNING) child.kill('SIGKILL');
}

/**
 * The environment a child gets: only what it needs, so nothing from the developer's shell
 * (an ADMIN_TOKEN, a REDIS_URL, a DATABASE_URL) changes what the test runs.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', NODE_ENV: 'production', ...env };
}

function capture(child: ChildProcess, source: string, secretStdout: boolean): { stdout: string[]; stderr: string[] } {
  const seen = { stdout: [] as string[], stderr: [] as string[] };
  for (const stream of ['stdout', 'stderr'] as const) {
    let rest = '';
    child[stream]?.setEncoding('utf8');
    child[stream]?.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const text of lines) {
        seen[stream].push(text);
        CHILD_OUTPUT.push({ source: `${source} ${stream}`, text, secret: secretStdout && stream === 'stdout' });
      }
    });
    child[stream]?.on('end', () => {
      if (rest === '') return;
      seen[stream].push(rest);
      CHILD_OUTPUT.push({ source: `${source} ${stream}`, text: rest, secret: secretStdout && stream === 'stdout' });
    });
  }
  return seen;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const exitOf = (child: ChildProcess): Promise<Exit> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

/** A CLI command run to its end. `secretStdout`: its stdout is the intended one-time key output. */
export async function runCli(args: string[], env: Record<string, string>, options: { secretStdout?: boolean } = {}) {
  const child = track(spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
  const seen = capture(child, `cli ${args.slice(0, 2).join(' ')}`, options.secretStdout ?? false);
  const exit = await exitOf(child);
  const result = { ...exit, stdout: seen.stdout.join('\n'), stderr: seen.stderr.join('\n') };
  if (exit.code !== 0) throw new Error(`price-export ${args.join(' ')} exited ${exit.code ?? exit.signal}: ${result.stderr}`);
  return result;
}

/** A CLI command left running (to be killed midway). */
export function spawnCli(args: string[], env: Record<string, string>): { child: ChildProcess; exited: Promise<Exit> } {
  const child = track(spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
  capture(child, `cli ${args.slice(0, 1).join(' ')}`, false);
  return { child, exited: exitOf(child) };
}

export interface Service {
  child: ChildProcess;
  port: number;
  base: string;
  /** The service's log lines (stdout, pino JSON), live. */
  lines: string[];
  /** Its stderr, live. */
  errors: string[];
  exited: Promise<Exit>;
}

/** `price-export serve` on 127.0.0.1:`port`; resolves once it listens. */
export async function startService(env: Record<string, string>, port: number): Promise<Service> {
  const child = track(spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
  const seen = capture(child, 'serve', false);
  const exited = exitOf(child);
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (seen.stdout.some((line) => line.includes('Server listening at'))) break;
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve did not start:\n${[...seen.stdout, ...seen.stderr].join('\n')}`);
    }
    await sleep(50);
  }
  return { child, port, base: `http://127.0.0.1:${port}`, lines: seen.stdout, errors: seen.stderr, exited };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export { freePort } from '../support/free-port.js';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  ms: number;
}

/** One request on a fresh connection (no keep-alive pool between tests). */
export function httpGet(url: string, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<HttpAnswer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: Date.now() - started }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** Every form in which a key could show up in text: raw, URL-encoded, base64, base64url. */
export function keyForms(key: string): string[] {
  // Lone surrogates travel as U+FFFD (what UTF-8 makes of them); encodeURIComponent would throw on them.
  const wellFormed = key.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
  const bytes = Buffer.from(wellFormed, 'utf8');
  return [...new Set([key, encodeURIComponent(wellFormed), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')])];
}

/**
 * Texts (log lines, responses) of this process's apps that contain one of `keys` in any of its
 * forms: test/support's findKeyLeaks, plus the base64 forms.
 */
export function findKeyLeaksAnyEncoding(keys: readonly string[], texts: readonly string[]): string[] {
  const leaks: string[] = [];
  for (const key of keys) {
    const forms = keyForms(key);
    for (const text of texts) if (forms.some((form) => text.includes(form))) leaks.push(`${key.slice(0, 8)}… in ${text.slice(0, 200)}`);
  }
  return leaks;
}

/** Lines the children printed that contain one of `keys`, except the intended one-time output. */
export function findChildKeyLeaks(keys: readonly string[]): string[] {
  const leaks: string[] = [];
  for (const key of keys) {
    const forms = keyForms(key);
    for (const line of CHILD_OUTPUT) {
      if (line.secret && line.text.trim() === key) continue;
      if (forms.some((form) => line.text.includes(form))) leaks.push(`${key.slice(0, 8)}… in ${line.source}: ${line.text.slice(0, 200)}`);
    }
  }
  return leaks;
}

/** A proxy in front of the database at `databaseUrl`, started, and the URL that reaches the database through it. */
export async function proxiedDatabase(databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const direct = new URL(databaseUrl);
  const proxy = new TcpProxy(direct.hostname, Number(direct.port || 5432));
  await proxy.start();
  const viaProxy = new URL(databaseUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  return { proxy, url: viaProxy.toString() };
}

/**
 * A TCP proxy of our own in front of a service (PostgreSQL, Redis): the real server is never
 * touched. `cut` closes the listener and every connection (a crashed or unreachable host:
 * refused at once); `blackhole` keeps connections open but forwards nothing (a network
 * partition: nothing is refused, nothing answers); `restore` forwards again on the same port.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private mode: 'open' | 'blackhole' = 'open';
  port = 0;

  constructor(private readonly targetHost: string, private readonly targetPort: number) {}

  async start(): Promise<number> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    const closed = server ? new Promise((resolve) => server.close(resolve)) : Promise.resolve();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  blackhole(): void {
    this.mode = 'blackhole';
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  async restore(): Promise<void> {
    this.mode = 'open';
    // Stalled connections are dropped: their clients see them fail and reconnect.
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (!this.server) await this.start();
  }

  async close(): Promise<void> {
    await this.cut();
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    if (this.mode === 'blackhole') {
      client.pause();
      return;
    }
    const upstream = connect(this.targetPort, this.targetHost);
    this.sockets.add(upstream);
    upstream.on('close', () => {
      this.sockets.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  }
}
