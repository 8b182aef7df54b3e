/**
 * Configuration, read from the environment once at start, validated, frozen.
 * Nothing else in the project reads process.env.
 */
/** The longest text field of a published item, in characters (MAX_FIELD_CHARS). */
export const DEFAULT_MAX_FIELD_CHARS = 1_000_000;
/** The longest NDJSON line, CSV record or JSON item of a publication, in bytes (MAX_LINE_BYTES); far below V8's longest string. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
/** The render cache's bound on disk, MiB (CACHE_MAX_MB); the disk cache's default too. */
export const DEFAULT_CACHE_MAX_MB = 1024;
/** PostgreSQL connections a process's pool opens at most (DATABASE_POOL_SIZE): node-postgres' own default. */
export const DEFAULT_POOL_SIZE = 10;

export interface Config {
  databaseUrl: string;
  port: number;
  host: string;
  /** '' or a prefix like `/prices`, no trailing slash. */
  basePath: string;
  /** What /openapi.json lists under `servers`; null lists the base path alone. */
  publicUrl: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  adminPort: number;
  adminHost: string;
  adminToken: string | null;
  redisUrl: string | null;
  rateLimitPerMin: number;
  authFailLimitPerMin: number;
  /** Wrong admin tokens a minute per client address (ADMIN_AUTH_FAIL_LIMIT_PER_MIN). */
  adminAuthFailLimitPerMin: number;
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (the failed-key limit is
   * per client): false (none, the default), a hop count, or a list of proxy addresses/CIDRs.
   */
  trustProxy: false | number | string[];
  /** NODE_ENV=production: no demo seeding on start. */
  production: boolean;
  /** HISTORY_VERSIONS: published versions kept per store (CONTRACT §10), at least 2. */
  historyVersions: number;
  /** LEDGER_DAYS: how long delivery records are kept (CONTRACT §12); 0 turns the ledger off. */
  ledgerDays: number;
  /**
   * DATABASE_POOL_SIZE: PostgreSQL connections a process's pool opens at most (its two listening
   * connections come on top); SQLite has no pool.
   */
  databasePoolSize: number;
  /** STALE_AFTER_MIN: a consumer is `behind` once the latest list it lacks is this old. */
  staleAfterMin: number;
  /** WEBHOOK_ALLOW_HTTP: webhook targets may be http:// (default https:// only). */
  webhookAllowHttp: boolean;
  /** WEBHOOK_ALLOW_PRIVATE: webhook targets may resolve to loopback, private or link-local addresses. */
  webhookAllowPrivate: boolean;
  /** Publication limits: a longer text field, NDJSON line, CSV record or JSON item refuses the file. */
  maxFieldChars: number;
  maxLineBytes: number;
  /**
   * Host headers /api/me may build its address templates from when PUBLIC_URL is not set
   * (ALLOWED_HOSTS, lower case, `host` or `host:port`); null: any Host outside production, none in it.
   */
  allowedHosts: string[] | null;
  /** Open connections per process on the public port (MAX_CONNECTIONS); newer ones are closed on arrival. */
  maxConnections: number;
  /** Seconds a public connection may pass with no traffic either way before it is closed (IDLE_TIMEOUT_SECONDS). */
  idleTimeoutSeconds: number;
  /** The render cache's root (CACHE_DIR); null: `price-export-cache` under the OS temp folder. */
  cacheDir: string | null;
  /** CACHE_MAX_MB, in bytes: what the render cache keeps on disk at most (least recently used out first). */
  cacheMaxBytes: number;
  /**
   * ACCEL_REDIRECT_PREFIX: with nginx in front on the same host, finished files are handed to
   * nginx by `X-Accel-Redirect: <prefix><file under CACHE_DIR>` (an `internal` location, e.g.
   * `/_cache/`); null (the default): this process sends them.
   */
  accelRedirectPrefix: string | null;
  /**
   * WARM_SCOPE: after a publication, an instance renders the store's variants asked for on any
   * instance (`fleet`, the default) or only those it served itself (`instance`: for a fleet
   * whose load balancer routes each key to one instance).
   */
  warmScope: 'fleet' | 'instance';
  // Operations (issue #21).
  /** METRICS=off turns metrics off; on (the default) they are served where metricsPort / the admin API says. */
  metrics: boolean;
  /** METRICS_PORT: GET /metrics on 127.0.0.1 at this port, without the admin token; null: only on the admin API. */
  metricsPort: number | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Bad configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env): Readonly<Config> {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return Number(raw);
  };

  const databaseUrl = read('DATABASE_URL') ?? 'sqlite:./data/price-export.db';
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    problems.push('DATABASE_URL must be sqlite:PATH or postgres://… / postgresql://…');
  }

  let basePath = read('BASE_PATH') ?? '';
  if (basePath !== '') {
    basePath = basePath.replace(/\/+$/, '');
    if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath)) {
      problems.push(`BASE_PATH must look like /prefix or /a/b (letters, digits, . _ ~ -), got "${read('BASE_PATH')}"`);
      basePath = '';
    }
  }

  const publicUrl = read('PUBLIC_URL') ?? null;
  if (publicUrl !== null && !/^https?:\/\/[^\s]+$/.test(publicUrl)) {
    problems.push(`PUBLIC_URL must be an absolute http(s) URL, got "${publicUrl}"`);
  }

  const logLevel = (read('LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const adminToken = read('ADMIN_TOKEN') ?? null;
  if (adminToken !== null && adminToken.length < 16) problems.push('ADMIN_TOKEN must be at least 16 characters');

  const redisUrl = read('REDIS_URL') ?? null;
  if (redisUrl !== null && !/^rediss?:\/\/.+/.test(redisUrl)) problems.push('REDIS_URL must be redis://… or rediss://…');

  const flag = (name: string): boolean => {
    const raw = read(name);
    if (raw === undefined || raw === 'false') return false;
    if (raw === 'true') return true;
    problems.push(`${name} must be true or false, got "${raw}"`);
    return false;
  };

  const trustProxyText = read('TRUST_PROXY');
  let trustProxy: Config['trustProxy'] = false;
  if (trustProxyText !== undefined && trustProxyText !== 'false') {
    if (/^\d{1,2}$/.test(trustProxyText)) trustProxy = Number(trustProxyText);
    else if (/^[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*$/.test(trustProxyText)) trustProxy = trustProxyText.split(',').map((a) => a.trim());
    else problems.push(`TRUST_PROXY must be false, a hop count, or a comma-separated list of proxy addresses/CIDRs, got "${trustProxyText}"`);
  }

  const cacheDir = read('CACHE_DIR');
  if (cacheDir !== undefined && !cacheDir.startsWith('/')) problems.push(`CACHE_DIR must be an absolute path, got "${cacheDir}"`);

  const accelRedirectPrefix = read('ACCEL_REDIRECT_PREFIX') ?? null;
  if (accelRedirectPrefix !== null && !/^(\/(?!\.+\/)[A-Za-z0-9._~-]+)+\/$/.test(accelRedirectPrefix)) {
    problems.push(`ACCEL_REDIRECT_PREFIX must be a location like /_cache/ (letters, digits, . _ ~ -, ending in /), got "${accelRedirectPrefix}"`);
  }
  const warmScope = read('WARM_SCOPE') ?? 'fleet';
  if (warmScope !== 'fleet' && warmScope !== 'instance') problems.push(`WARM_SCOPE must be fleet or instance, got "${warmScope}"`);

  const allowedHostsText = read('ALLOWED_HOSTS');
  const allowedHosts = allowedHostsText?.split(',').map((host) => host.trim().toLowerCase()).filter((host) => host !== '') ?? null;
  for (const host of allowedHosts ?? []) {
    if (!/^([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/.test(host)) problems.push(`ALLOWED_HOSTS must list host or host:port names, comma-separated; "${host}" is not one`);
  }
  // Operations (issue #21): metrics on or off, and their loopback port.
  const metricsText = (read('METRICS') ?? 'on').toLowerCase();
  if (!['on', 'off'].includes(metricsText)) problems.push(`METRICS must be on or off, got "${metricsText}"`);
  const metricsPort = read('METRICS_PORT') === undefined ? null : integer('METRICS_PORT', 0, 1, 65535);

  const config: Config = {
    databaseUrl,
    port: integer('PORT', 8080, 0, 65535),
    host: read('HOST') ?? '0.0.0.0',
    basePath,
    publicUrl: publicUrl?.replace(/\/+$/, '') ?? null,
    logLevel,
    adminPort: integer('ADMIN_PORT', 8081, 0, 65535),
    adminHost: read('ADMIN_HOST') ?? '127.0.0.1',
    adminToken,
    redisUrl,
    // Up to 100 M: one instance answers 25,000+ revalidations a second (1.5 M a minute), and a
    // quota below what a benchmark or a big fleet of fetchers sends must stay settable.
    rateLimitPerMin: integer('RATE_LIMIT_PER_MIN', 120, 1, 100_000_000),
    authFailLimitPerMin: integer('AUTH_FAIL_LIMIT_PER_MIN', 20, 1, 1_000_000),
    adminAuthFailLimitPerMin: integer('ADMIN_AUTH_FAIL_LIMIT_PER_MIN', 30, 1, 1_000_000),
    trustProxy,
    production: read('NODE_ENV') === 'production',
    historyVersions: integer('HISTORY_VERSIONS', 10, 2, 1000),
    ledgerDays: integer('LEDGER_DAYS', 30, 0, 3650),
    databasePoolSize: integer('DATABASE_POOL_SIZE', DEFAULT_POOL_SIZE, 1, 1000),
    staleAfterMin: integer('STALE_AFTER_MIN', 120, 1, 525_600),
    webhookAllowHttp: flag('WEBHOOK_ALLOW_HTTP'),
    webhookAllowPrivate: flag('WEBHOOK_ALLOW_PRIVATE'),
    maxFieldChars: integer('MAX_FIELD_CHARS', DEFAULT_MAX_FIELD_CHARS, 1, 100_000_000),
    cacheDir: cacheDir ?? null,
    cacheMaxBytes: integer('CACHE_MAX_MB', DEFAULT_CACHE_MAX_MB, 1, 16 * 1024 * 1024) * 1024 * 1024,
    accelRedirectPrefix,
    warmScope: warmScope === 'instance' ? 'instance' : 'fleet',
    allowedHosts,
    maxConnections: integer('MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    idleTimeoutSeconds: integer('IDLE_TIMEOUT_SECONDS', 120, 1, 86_400),
    maxLineBytes: integer('MAX_LINE_BYTES', DEFAULT_MAX_LINE_BYTES, 1, 256 * 1024 * 1024),
    metrics: metricsText !== 'off',
    metricsPort,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}
