/*
 * The service under test as its own process: the built `dist` entry when there is one (see
 * run.ts), else the TypeScript through tsx. Reads its JSON log for the listening port and
 * the render cache's "export rendered" lines; samples its RSS and CPU time from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface ServerOptions {
  /** [node args…, entry] to run, e.g. ['dist/cli/index.js'] or ['--import', 'tsx', 'src/cli/index.ts']. */
  command: string[];
  databaseUrl: string;
  cwd: string;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeFlags?: string[];
  env?: Record<string, string>;
  /** Pinned to these CPUs (`taskset -c`), so the scheduler moving it about is not part of what is measured. */
  cpus?: string;
  /** Apps the process listens with (bench/lib/ledger-twins.ts: 2); started when each has logged its address. */
  apps?: number;
}

export interface RenderedVariant {
  store: string;
  version: number;
  /** The server's wall-clock time of the render's end, ms. */
  at: number;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  base: string;
  /** Every app's address, in the order they listened (`base` is the first). */
  bases: string[];
  /** "export rendered" log lines so far. */
  renders(): number;
  /**
   * Each render's store, version and the server's own time of it (ms, from its log line): the
   * lines can reach this process seconds late under load, their times are still right.
   */
  rendered(): readonly RenderedVariant[];
  /** Log lines at warn or above so far. */
  problems(): string[];
  stop(): Promise<void>;
}

const CLOCK_TICKS = 100;

/** Resident set size of a process, MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

/** A /proc stat line's CPU figures, in seconds (its own, user + system, and its reaped children's), and its parent. */
interface StatCpu {
  own: number;
  children: number;
  parent: number;
}

/** A /proc stat line's fields after the command name (which may hold spaces): ppid [1], minflt [7], utime [11], stime [12], cutime [13], cstime [14]. */
function statFields(pid: number | 'self'): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function readStatCpu(pid: number | 'self'): StatCpu {
  const fields = statFields(pid);
  const seconds = (at: number) => (Number(fields[at]) + Number(fields[at + 1])) / CLOCK_TICKS;
  return { own: seconds(11), children: seconds(13), parent: Number(fields[1]) };
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  return readStatCpu(pid).own;
}

/**
 * Minor page faults a process has taken so far (its memory first touched, or mapped again): on
 * hosts where one costs ~12 µs they are a figure's cost of their own (bench/RESULTS.md, "2026-12-02, morning").
 */
export function minorFaults(pid: number): number {
  return Number(statFields(pid)[7]);
}

/** CPU seconds of the children this process has waited for (a client run to its end), so far. */
export function reapedChildrenCpuSeconds(): number {
  return readStatCpu('self').children;
}

/** What PostgreSQL's processes on this machine had used at one moment. */
interface PostgresCpuSnapshot {
  /** CPU seconds of each live process named `postgres` (the postmasters, their helpers and backends), by pid. */
  live: Map<number, number>;
  /** CPU seconds of the postmasters' children that have ended (their cutime + cstime): backends of closed connections. */
  ended: number;
}

function postgresCpuSnapshot(): PostgresCpuSnapshot {
  const processes = new Map<number, StatCpu>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8') === 'postgres\n') processes.set(pid, readStatCpu(pid));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  // A postmaster is a `postgres` whose parent is not one; it reaps every backend that ends.
  let ended = 0;
  for (const cpu of processes.values()) if (!processes.has(cpu.parent)) ended += cpu.children;
  return { live: new Map([...processes].map(([pid, cpu]) => [pid, cpu.own])), ended };
}

/**
 * The CPU seconds PostgreSQL's processes use from now until the returned function is called.
 * On two cores a render is limited by the service's, the database server's and the client's CPU
 * together, so a figure names each one's share. A backend started meanwhile counts whole (its
 * start is part of the work), also when it has ended by then (a client's, as it disconnects:
 * the postmaster has reaped it and holds its CPU); one that was there before and ended meanwhile
 * (a stopped server's connection) counts only what it used after now.
 */
export function measurePostgresCpu(): () => number {
  const before = postgresCpuSnapshot();
  return () => {
    const after = postgresCpuSnapshot();
    let total = after.ended - before.ended;
    for (const [pid, seconds] of after.live) total += seconds - (before.live.get(pid) ?? 0);
    // Reaped meanwhile: its whole life is in `ended`, the part before now is not this work.
    for (const [pid, seconds] of before.live) if (!after.live.has(pid)) total -= seconds;
    return total;
  };
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak seen. */
export function sampleRss(pid: number, everyMs = 20): () => number {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      // The process ended.
    }
  }, everyMs);
  return () => {
    clearInterval(timer);
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {
      // The process ended.
    }
    return peak;
  };
}

export async function startServer(options: ServerOptions): Promise<ServerProcess> {
  const [first, ...rest] = options.command;
  const node = [process.execPath, ...(options.nodeFlags ?? []), first, ...rest, 'serve'];
  // taskset execs node: the child's pid stays the server's.
  const [program, ...programArgs] = options.cpus ? ['taskset', '-c', options.cpus, ...node] : node;
  const child = spawn(program, programArgs, {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: options.databaseUrl,
      // The quota of CONTRACT §8 would answer 429 to a benchmark; it is not what is measured.
      // 304s run at 25,000+ a second: 1,000,000 a minute answered some rounds 429.
      RATE_LIMIT_PER_MIN: '100000000',
      AUTH_FAIL_LIMIT_PER_MIN: '1000000',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const rendered: RenderedVariant[] = [];
  const problems: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const bases: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      // A request's log line is parsed by no one here: at 25,000 a second, parsing each would take
      // a share of the CPU the figures are measured on.
      if (!line.startsWith('{') || line.includes('"msg":"request"')) return;
      let entry: { level?: number; msg?: string; time?: number; store?: string; version?: number };
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      if (entry.msg === 'export rendered') {
        rendered.push({ store: String(entry.store), version: Number(entry.version), at: Number(entry.time) });
      }
      if ((entry.level ?? 0) >= 40) problems.push(line.slice(0, 300));
      const listening = /^Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(entry.msg ?? '');
      if (listening) bases.push(listening[1]);
      if (listening && bases.length === (options.apps ?? 1)) resolve();
    });
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening: ${stderr}`)));
  });

  return {
    child,
    pid: child.pid!,
    base: bases[0],
    bases,
    renders: () => rendered.length,
    rendered: () => rendered,
    problems: () => problems,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
