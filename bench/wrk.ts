/* wrk (/usr/bin/wrk) on loopback, bounded in time; returns requests/s and what it saw. */
import { execFile } from 'node:child_process';

export interface WrkResult {
  requestsPerSecond: number;
  /** Non-2xx/3xx answers, socket errors, timeouts: anything but a clean run. */
  errors: string[];
  latencyP99: string;
}

export function wrk(url: string, options: { connections: number; seconds: number; threads?: number; headers?: Record<string, string> }): Promise<WrkResult> {
  const args = ['-t', String(options.threads ?? 2), '-c', String(options.connections), '-d', `${options.seconds}s`, '--latency'];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { timeout: (options.seconds + 30) * 1000 }, (error, stdout) => {
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
      });
    });
  });
}
