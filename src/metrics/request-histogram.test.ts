import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { RequestHistogram } from './request-histogram.js';

test('the hand-kept request histogram exposes exactly what prom-client\'s Histogram would for the same observations', async () => {
  const buckets = [0.001, 0.01, 0.1, 1];
  const ours = new Registry();
  const theirs = new Registry();
  const mine = new RequestHistogram('h_seconds', 'help text', buckets, ours);
  const reference = new Histogram({ name: 'h_seconds', help: 'help text', labelNames: ['method', 'route', 'status'], buckets, registers: [theirs] });
  const observations: Array<[string, string, number, number]> = [
    ['GET', '/a/:key', 304, 0.0004], ['GET', '/a/:key', 304, 0.001], ['GET', '/a/:key', 200, 0.05], ['HEAD', '/b', 200, 7], ['GET', '/a/:key', 304, 0.1],
  ];
  for (const [method, route, status, seconds] of observations) {
    mine.observe(method, route, status, seconds);
    reference.observe({ method, route, status: String(status) }, seconds);
  }
  // Label order within a sample may differ; compare each sample's name, sorted labels and value.
  const normalize = (text: string) =>
    text.trim().split('\n').map((line) => {
      const match = /^(\w+)(?:\{(.*)\})? (.+)$/.exec(line);
      if (!match) return line;
      const labels = (match[2] ?? '').split(/,(?=\w+=)/).filter(Boolean).sort().join(',');
      return `${match[1]}{${labels}} ${Number(match[3])}`;
    }).sort();
  assert.deepEqual(normalize(await ours.metrics()), normalize(await theirs.metrics()));
});
