import { accessSync, constants, existsSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { openCounter } from '../rate-limit/factory.js';
import { DEFAULT_CACHE_ROOT, DEFAULT_MAX_BYTES } from '../render-cache/disk-cache.js';
import { openDatabase } from '../store/factory.js';

/** One finding: what was checked, and either what is fine or what is wrong, in plain words. */
interface Finding {
  subject: string;
  ok: boolean;
  text: string;
}

export interface DoctorOptions {
  env: Record<string, string | undefined>;
  /** The render cache's root to check instead of the configuration's (CACHE_DIR, else the OS temp folder's `price-export-cache`). */
  cacheRoot?: string;
  print(line: string): void;
}

const GiB = 1024 ** 3;

/**
 * `price-export doctor`: checks the configuration, the database (reachable, migrated, WAL on
 * SQLite), Redis when configured, and the render cache's directory (private, writable, room
 * for the cache), printing each finding in plain words. Returns 1 when anything is wrong.
 * Addresses are printed without user or password.
 */
export async function runDoctor(options: DoctorOptions): Promise<number> {
  const findings: Finding[] = [];
  const note = (finding: Finding) => {
    findings.push(finding);
    options.print(`${finding.ok ? 'ok  ' : 'FAIL'}  ${finding.subject}: ${finding.text}`);
  };

  let config: Readonly<Config> | null = null;
  try {
    config = loadConfig(options.env);
    note({ subject: 'configuration', ok: true, text: 'every variable is valid' });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) note({ subject: 'configuration', ok: false, text: problem });
  }
  if (config) {
    for (const finding of await checkDatabase(config.databaseUrl)) note(finding);
    if (config.redisUrl !== null) note(await checkRedis(config.redisUrl));
  }
  const cacheRoot = options.cacheRoot ?? config?.cacheDir ?? DEFAULT_CACHE_ROOT;
  for (const finding of checkCacheDirectory(cacheRoot, config?.cacheMaxBytes ?? DEFAULT_MAX_BYTES)) note(finding);

  const wrong = findings.filter((f) => !f.ok).length;
  options.print(wrong === 0 ? 'Everything looks right.' : `${wrong} problem(s) found.`);
  return wrong === 0 ? 0 : 1;
}

/** `SQLite file PATH` or `PostgreSQL at host:port/db`: never the user or password of the URL. */
function describeDatabase(url: string): string {
  if (url.startsWith('sqlite:')) return `SQLite file ${url.slice('sqlite:'.length)}`;
  const parsed = new URL(url);
  return `PostgreSQL at ${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
}

async function checkDatabase(url: string): Promise<Finding[]> {
  const subject = 'database';
  const where = describeDatabase(url);
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : null;
  // Opening a missing SQLite file would create it: say so instead.
  if (path !== null && path !== ':memory:' && !existsSync(path)) {
    return [{ subject, ok: false, text: `${where} does not exist; run "price-export migrate" to create it` }];
  }
  const db = await openDatabase(url, { startThreads: false });
  try {
    const findings: Finding[] = [];
    let pending: number;
    try {
      pending = await db.pendingMigrations();
    } catch (error) {
      // The error's code only: a driver's message can carry the URL.
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
      return [{ subject, ok: false, text: `${where} cannot be reached (${code}); is it running, and is DATABASE_URL right?` }];
    }
    findings.push(pending === 0
      ? { subject, ok: true, text: `${where} answers; its schema is up to date` }
      : { subject, ok: false, text: `${where} answers, but its schema is behind by ${pending} migration(s); run "price-export migrate"` });
    const mode = db.journalMode?.();
    if (mode !== undefined) {
      findings.push(mode.toLowerCase() === 'wal'
        ? { subject, ok: true, text: 'SQLite is in WAL mode' }
        : { subject, ok: false, text: `SQLite is in ${mode} mode, not WAL: downloads would wait for every publication (WAL needs a local filesystem)` });
    }
    const native = db.nativeRecords?.();
    if (native !== undefined) {
      // Not a fault: the SQL records are the same bytes, only slower to make.
      findings.push({ subject, ok: true, text: native
        ? 'CSV, TSV, JSON, XML and YML pages are built by the C records code (build/native/)'
        : 'CSV, TSV, JSON, XML and YML pages are built by SQL: the C records code was not built, or was built by an older checkout (run npm run build; it needs a C compiler), so their first downloads are slower' });
    }
    const reader = db.nativeItemReader?.();
    if (reader !== undefined) {
      // Not a fault either: JavaScript reads every item to the same rows, only slower.
      findings.push({ subject, ok: true, text: reader
        ? 'JSON, NDJSON and CSV publications are read by the native item reader (build/native/)'
        : 'JSON, NDJSON and CSV publications are read by JavaScript: the native item reader was not built, or was built by an older checkout (run npm run build; it needs a C compiler), so large publications are slower' });
    }
    return findings;
  } finally {
    await db.close().catch(() => undefined);
  }
}

async function checkRedis(url: string): Promise<Finding> {
  const parsed = new URL(url);
  const where = `Redis at ${parsed.hostname}:${parsed.port || 6379}`;
  const counter = await openCounter(url);
  try {
    await counter.peek('doctor', 60_000);
    return { subject: 'redis', ok: true, text: `${where} answers` };
  } catch {
    return { subject: 'redis', ok: false, text: `${where} does not answer: instances would not share rate limits (each would count alone)` };
  } finally {
    await counter.close().catch(() => undefined);
  }
}

/** The cache's root: private, writable, with room for `maxBytes` (CACHE_MAX_MB). */
function checkCacheDirectory(root: string, maxBytes: number): Finding[] {
  const subject = 'cache directory';
  let dir = root;
  if (!existsSync(root)) {
    // The service creates it on start; what matters now is that it can.
    dir = dirname(root);
    if (!existsSync(dir)) return [{ subject, ok: false, text: `${root} does not exist, nor does its parent ${dir}` }];
  }
  const info = statSync(dir);
  if (!info.isDirectory()) return [{ subject, ok: false, text: `${dir} is not a directory` }];
  const findings: Finding[] = [];
  if (dir === root) {
    // Another user who can write here could plant or replace cached exports that we serve.
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) findings.push({ subject, ok: false, text: `${root} belongs to another user (uid ${info.uid}); the service must own its cache` });
    else if ((info.mode & 0o022) !== 0) findings.push({ subject, ok: false, text: `${root} is writable by other users (mode ${(info.mode & 0o777).toString(8)}); run chmod go-w on it` });
    else findings.push({ subject, ok: true, text: `${root} is private to this user${(info.mode & 0o005) !== 0 ? ' (others may read it; chmod o-rx keeps price lists to yourself)' : ''}` });
  }
  try {
    accessSync(dir, constants.W_OK);
    const probe = join(dir, `.doctor-${process.pid}`);
    writeFileSync(probe, 'ok');
    rmSync(probe);
    findings.push({ subject, ok: true, text: `${dir} is writable` });
  } catch (error) {
    findings.push({ subject, ok: false, text: `${dir} is not writable (${(error as NodeJS.ErrnoException).code ?? 'error'}); exports would render on every request` });
  }
  const { bavail, bsize } = statfsSync(dir);
  const free = bavail * bsize;
  findings.push(free >= maxBytes
    ? { subject, ok: true, text: `${(free / GiB).toFixed(1)} GiB free` }
    : { subject, ok: false, text: `only ${(free / GiB).toFixed(2)} GiB free where the cache may hold ${(maxBytes / GiB).toFixed(maxBytes < GiB ? 2 : 0)} GiB (CACHE_MAX_MB)` });
  return findings;
}
