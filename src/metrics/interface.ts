/**
 * Operational metrics as a capability: domain, render-cache and HTTP code call these small
 * methods and never import prom-client. `noopMetrics` is the default (metrics off, and most
 * tests); `PrometheusMetrics` (./prometheus.ts) is the real one, wired in by src/cli/serve.ts.
 *
 * Labels are bounded by construction: route patterns (never the address, which may carry a
 * key), status codes, format names, verdicts, refusal kinds. Never a key, a secret, a client
 * address or a store id (the number of stores is unbounded; per-store numbers belong in logs).
 */
export interface Metrics {
  /** One answered HTTP request: `route` is the route pattern (`/api/export/latest`), `(unmatched)` for a 404 on no route. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;

  /** A render cache answer for an export of `format` (`csv`, `xlsx`, …). */
  cacheHit(format: string): void;
  cacheMiss(format: string): void;
  /**
   * Times one render: wraps the body the render cache pulls (it pulls each at most once), and
   * records a render and its seconds from the first pull to the last byte.
   */
  timeRender<S extends RenderBody>(format: string, source: S): S;
  /** Reads the render cache's bytes on disk, its bound (CACHE_MAX_MB) and its evictions so far (RenderCacheStats) when scraped. */
  watchRenderCache(read: () => RenderCacheReading): void;

  /** Seconds from a publication to its legacy CSV being in this instance's cache. */
  warmerLag(seconds: number): void;

  /** One publication finished with `verdict` after `seconds` (reading, validating and storing). */
  publication(verdict: PublicationVerdict, seconds: number): void;

  /** A request refused by a rate limit: `store` (a store's quota) or `auth-fail` (a client's wrong keys). */
  rateLimitRefused(kind: 'store' | 'auth-fail'): void;

  /** Reads the database pool's use when scraped (PostgreSQL; SQLite has none). */
  watchDatabasePool(read: () => DatabasePoolUse | undefined): void;

  // Reserved for the ledger and webhook issue: ledger batch sizes and drops, webhook outbox
  // depth, retries and failures go here as methods of the same shape (`ledgerBatch(size)`, …).

  /** The Prometheus text exposition (empty with metrics off). */
  render(): Promise<{ contentType: string; body: string }>;
}

/**
 * What became of a publication. Today `published` or `refused` (a bad row or file); the
 * publication guard adds `held` and `quarantined`.
 */
export type PublicationVerdict = 'published' | 'refused' | 'held' | 'quarantined';

export const PUBLICATION_VERDICTS: readonly PublicationVerdict[] = ['published', 'refused', 'held', 'quarantined'];

/** What a render produces: the render cache's RenderSource has this shape. */
export interface RenderBody {
  body(): AsyncIterable<Uint8Array>;
}

export interface DatabasePoolUse {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

/** What the render cache's metrics read of it when scraped (a part of RenderCacheStats). */
export interface RenderCacheReading {
  bytes: number;
  maxBytes: number;
  evictions: number;
}

/** Metrics off: every method does nothing, so instrumented code costs a call and no more. */
export const noopMetrics: Metrics = {
  httpRequest() {},
  cacheHit() {},
  cacheMiss() {},
  timeRender: (_format, source) => source,
  watchRenderCache() {},
  warmerLag() {},
  publication() {},
  rateLimitRefused() {},
  watchDatabasePool() {},
  render: async () => ({ contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' }),
};
