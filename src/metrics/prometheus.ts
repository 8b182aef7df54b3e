import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { RequestHistogram } from './request-histogram.js';
import { PUBLICATION_VERDICTS, type DatabasePoolUse, type Metrics, type PublicationVerdict, type RenderBody, type RenderCacheReading } from './interface.js';

/** Every metric of ours starts with this; the process metrics keep prom-client's standard names. */
const PREFIX = 'price_export_';

/** Request latencies: a 304 or a cached file takes a millisecond or two, a first render of a large list seconds. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Renders and publications: from a small list in milliseconds to a million items in tens of seconds. */
const LONG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Warmer lag: the warmer polls every 3 s, so most lags fall between 0 and a few polls plus the render. */
const LAG_BUCKETS = [0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300];

/**
 * The prom-client implementation of {@link Metrics}, on a registry of its own (not prom-client's
 * global one, so two apps in one test process never collide). Metric names and their labels are
 * listed in README.md, "Operations".
 */
export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  private readonly requests: RequestHistogram;
  private readonly hits: Counter<'format'>;
  private readonly misses: Counter<'format'>;
  private readonly renders: Histogram<'format'>;
  private readonly lag: Histogram;
  private readonly publications: Histogram<'verdict'>;
  private readonly refusals: Counter<'kind'>;
  private cache: () => RenderCacheReading = () => ({ bytes: 0, maxBytes: 0, evictions: 0 });
  private pool: () => DatabasePoolUse | undefined = () => undefined;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new RequestHistogram(`${PREFIX}http_request_duration_seconds`, 'HTTP requests by route pattern and status, and their latency', REQUEST_BUCKETS, this.registry);
    this.hits = new Counter({ name: `${PREFIX}render_cache_hits_total`, help: 'Exports answered from the render cache, by format', labelNames: ['format'], registers });
    this.misses = new Counter({ name: `${PREFIX}render_cache_misses_total`, help: 'Exports the render cache could not answer (rendered, or followed while rendering), by format', labelNames: ['format'], registers });
    this.renders = new Histogram({
      name: `${PREFIX}render_duration_seconds`, help: 'Renders of an export into the cache, by format, and their seconds',
      labelNames: ['format'], buckets: LONG_BUCKETS, registers,
    });
    // Read from the cache's own counts when scraped: the cache itself knows nothing of metrics.
    const cache = () => this.cache();
    let evicted = 0;
    new Counter({
      name: `${PREFIX}render_cache_evictions_total`, help: 'Finished cache entries dropped to stay under the byte bound', registers,
      collect() {
        const now = cache().evictions;
        if (now > evicted) this.inc(now - evicted);
        evicted = now;
      },
    });
    new Gauge({ name: `${PREFIX}render_cache_bytes`, help: 'Bytes the render cache holds on disk', registers, collect() { this.set(cache().bytes); } });
    new Gauge({ name: `${PREFIX}render_cache_max_bytes`, help: 'The render cache\'s bound on disk (CACHE_MAX_MB)', registers, collect() { this.set(cache().maxBytes); } });
    this.lag = new Histogram({ name: `${PREFIX}warmer_lag_seconds`, help: 'Seconds from a publication to its legacy CSV in this instance\'s cache', buckets: LAG_BUCKETS, registers });
    this.publications = new Histogram({
      name: `${PREFIX}publication_duration_seconds`, help: 'Publications by verdict (published, refused, held, quarantined), and their seconds',
      labelNames: ['verdict'], buckets: LONG_BUCKETS, registers,
    });
    // Every verdict is exported from the start (at zero), so a dashboard's query never has a gap.
    for (const verdict of PUBLICATION_VERDICTS) this.publications.zero({ verdict });
    this.refusals = new Counter({ name: `${PREFIX}rate_limit_refusals_total`, help: 'Requests refused by a rate limit, by kind (store, auth-fail)', labelNames: ['kind'], registers });
    this.refusals.inc({ kind: 'store' }, 0);
    this.refusals.inc({ kind: 'auth-fail' }, 0);
    const pool = () => this.pool();
    new Gauge({
      name: `${PREFIX}database_pool_connections`, help: 'Database pool connections by state (total, idle, waiting clients, max); PostgreSQL only',
      labelNames: ['state'], registers,
      collect() {
        const use = pool();
        if (!use) return;
        for (const state of ['total', 'idle', 'waiting', 'max'] as const) this.set({ state }, use[state]);
      },
    });
    // Ledger and webhook metrics (another issue) are registered here, next to these.
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.requests.observe(method, route, status, seconds);
  }

  cacheHit(format: string): void {
    this.hits.inc({ format });
  }

  cacheMiss(format: string): void {
    this.misses.inc({ format });
  }

  timeRender<S extends RenderBody>(format: string, source: S): S {
    const renders = this.renders;
    async function* timed() {
      const end = renders.startTimer({ format });
      try {
        yield* source.body();
      } finally {
        end();
      }
    }
    return { ...source, body: timed };
  }

  watchRenderCache(read: () => RenderCacheReading): void {
    this.cache = read;
  }

  warmerLag(seconds: number): void {
    this.lag.observe(Math.max(0, seconds));
  }

  publication(verdict: PublicationVerdict, seconds: number): void {
    this.publications.observe({ verdict }, seconds);
  }

  rateLimitRefused(kind: 'store' | 'auth-fail'): void {
    this.refusals.inc({ kind });
  }

  watchDatabasePool(read: () => DatabasePoolUse | undefined): void {
    this.pool = read;
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
