import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { tcpAccepts } from './tcp-accepts.js';
import { until } from './until.js';

/** Debian's `pgbouncer` package. */
const PGBOUNCER = '/usr/sbin/pgbouncer';

export const pgbouncerInstalled = (): boolean => existsSync(PGBOUNCER);

export interface PgBouncer {
  /** `postgresUrl` with its host and port PgBouncer's: the same database and user, through the pooler. */
  through(postgresUrl: string): string;
  /** What PgBouncer logged (its refusals name the startup parameter it did not take). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * PgBouncer in session mode in front of the PostgreSQL at `postgresUrl`, as README's "Deployment
 * on PostgreSQL" allows: every database passed through, the URL's user let in without a password
 * (trust, as the test server is). It refuses to run as root, so as root it drops to `postgres`,
 * the user Debian's PostgreSQL runs as, which must read its configuration.
 */
export async function startPgBouncer(postgresUrl: string): Promise<PgBouncer> {
  const postgres = new URL(postgresUrl);
  const dir = mkdtempSync(join(tmpdir(), 'price-export-pgbouncer-'));
  chmodSync(dir, 0o755);
  const port = await freePort();
  const users = join(dir, 'users.txt');
  writeFileSync(users, `"${decodeURIComponent(postgres.username || 'postgres')}" ""\n`, { mode: 0o644 });
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=${postgres.hostname} port=${postgres.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      // No Unix socket: two of these at once would share /tmp/.s.PGSQL.<port> otherwise.
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${users}`,
      'pool_mode = session',
      'max_client_conn = 200',
      'default_pool_size = 50',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => { output += chunk; });
  child.stderr!.on('data', (chunk) => { output += chunk; });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', () => child.kill('SIGKILL'));
  try {
    await until('PgBouncer to listen', () => {
      if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode}: ${output}`);
      return tcpAccepts('127.0.0.1', port);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    through(url) {
      const via = new URL(url);
      via.hostname = '127.0.0.1';
      via.port = String(port);
      return via.toString();
    },
    output: () => output,
    stop,
  };
}
