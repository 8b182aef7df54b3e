// A real third-party reader of what /metrics writes: parse-prometheus-text-format (the
// Prometheus text exposition format, as prom2json reads it).
import { createRequire } from 'node:module';

/** One metric family as the parser gives it. Histograms carry buckets/count/sum instead of value. */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{ labels?: Record<string, string>; value?: string; buckets?: Record<string, string> }>;
}

const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => MetricFamily[];

/**
 * Parses the exposition text; throws on text the format does not allow. The parser folds a
 * histogram with labels into one sample and loses its labels, counts and sums, so the text is
 * read a second time with histograms declared untyped: their `_count`, `_sum` and `_bucket`
 * series then come back as families of their own, labels included.
 */
export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map(parse(text).map((family) => [family.name, family]));
  // Read so, each label set's series form a run of their own: the runs of one name are merged.
  const series = new Map<string, MetricFamily>();
  for (const family of parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))) {
    if (!/_(count|sum|bucket)$/.test(family.name) || families.has(family.name)) continue;
    const seen = series.get(family.name);
    if (seen) seen.metrics.push(...family.metrics);
    else series.set(family.name, { ...family, metrics: [...family.metrics] });
  }
  for (const [name, family] of series) families.set(name, family);
  return families;
}

/**
 * The value of one sample (a histogram's count) of `name` whose labels include `labels`;
 * 0 when the family has no such sample, undefined when there is no such family.
 */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  if (families.get(name)?.type === 'HISTOGRAM') return sampleValue(families, `${name}_count`, labels) ?? 0;
  const family = families.get(name);
  if (!family) return undefined;
  const sample = family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample ? Number(sample.value) : 0;
}
