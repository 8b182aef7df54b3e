import type { Metric, Registry } from 'prom-client';

interface Series {
  labels: { method: string; route: string; status: string };
  /** Per bucket (not cumulative) counts; the last is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request latency histogram, kept by hand and handed to prom-client's registry as a metric
 * (its `get()` shape): prom-client's own Histogram validates and hashes the label set on every
 * observe, ~1–2 µs, a measurable share of a 304 (bench/metrics-overhead.ts). Here a request
 * costs three map look-ups and a bucket search; the exposition is the same.
 */
export class RequestHistogram {
  readonly aggregator = 'sum';
  readonly type = 'histogram';
  private readonly series = new Map<string, Map<number, Map<string, Series>>>();

  constructor(readonly name: string, readonly help: string, private readonly buckets: readonly number[], registry: Registry) {
    // prom-client's registry reads any object with this metric shape; its types list only its own classes.
    registry.registerMetric(this as unknown as Metric);
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    let byStatus = this.series.get(route);
    if (!byStatus) this.series.set(route, (byStatus = new Map()));
    let byMethod = byStatus.get(status);
    if (!byMethod) byStatus.set(status, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, counts: new Float64Array(this.buckets.length + 1), sum: 0, count: 0 };
      byMethod.set(method, series);
    }
    let bucket = 0;
    while (bucket < this.buckets.length && seconds > this.buckets[bucket]) bucket++;
    series.counts[bucket]++;
    series.sum += seconds;
    series.count++;
  }

  /** The registry's view: cumulative `_bucket`s with `le`, then `_sum` and `_count`, per label set. */
  async get() {
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const byStatus of this.series.values()) {
      for (const byMethod of byStatus.values()) {
        for (const { labels, counts, sum, count } of byMethod.values()) {
          let cumulative = 0;
          this.buckets.forEach((bound, index) => {
            cumulative += counts[index];
            values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
          });
          values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
          values.push({ metricName: `${this.name}_sum`, labels, value: sum });
          values.push({ metricName: `${this.name}_count`, labels, value: count });
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}
