/* wrk (/usr/bin/wrk) on loopback, bounded in time; returns requests/s and what it saw. */
import { execFile } from 'node:child_process';

export interface WrkResult {
  requestsPerSecond: number;
  /** Non-2xx/3xx answers, socket errors, timeouts: anything but a clean run. */
  errors: string[];
  latencyP99: string;
  /** Latency percentiles in ms (NaN when wrk printed none). */
  p50Ms: number;
  p99Ms: number;
}

export interface WrkOptions {
  connections: number;
  seconds: number;
  threads?: number;
  /** Pinned to these CPUs (`taskset -c`). */
  cpus?: string;
  headers?: Record<string, string>;
  /** A Lua script (wrk -s) and the arguments its init() receives (after `--`). */
  script?: string;
  scriptArgs?: string[];
}

const milliseconds = (text: string | undefined): number => {
  const match = /([\d.]+)(us|ms|s)/.exec(text ?? '');
  if (!match) return NaN;
  return Number(match[1]) * (match[2] === 'us' ? 0.001 : match[2] === 's' ? 1000 : 1);
};

export function wrk(url: string, options: WrkOptions): Promise<WrkResult> {
  const args = ['-t', String(options.threads ?? 2), '-c', String(options.connections), '-d', `${options.seconds}s`, '--latency'];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  if (options.script) args.push('-s', options.script);
  args.push(url);
  if (options.scriptArgs) args.push('--', ...options.scriptArgs);
  return new Promise((resolve, reject) => {
    const [program, ...programArgs] = options.cpus ? ['taskset', '-c', options.cpus, 'wrk', ...args] : ['wrk', ...args];
    execFile(program, programArgs, { timeout: (options.seconds + 30) * 1000 }, (error, stdout) => {
      if (error) return reject(error);
      const errors: string[] = [];
      const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
      if (non2xx) errors.push(`${non2xx[1]} non-2xx/3xx answers`);
      const socket = /Socket errors: (.*)/.exec(stdout);
      if (socket) errors.push(`socket errors: ${socket[1]}`);
      resolve({
        requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN),
        errors,
        latencyP99: /\s99%\s+(\S+)/.exec(stdout)?.[1] ?? '?',
        p50Ms: milliseconds(/\s50%\s+(\S+)/.exec(stdout)?.[1]),
        p99Ms: milliseconds(/\s99%\s+(\S+)/.exec(stdout)?.[1]),
      });
    });
  });
}
