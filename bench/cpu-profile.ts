/*
 * The top frames of a V8 .cpuprofile (node --cpu-prof): self time per function, heaviest first,
 * as a share of the busy (non-idle) time inside a window of the run.
 * bench/run.ts profiles the server for every figure that misses its goal and writes these into
 * RESULTS.md, so "what limits it" is a measurement.
 *
 *   node --import tsx bench/cpu-profile.ts FILE.cpuprofile [top]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Now on the clock V8 stamps profile samples with (CLOCK_MONOTONIC, µs): shared by every process of the machine. */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

/** A span of time (monotonicMicros) to keep samples from; the server's start-up is outside it. */
export interface Window {
  from: number;
  to: number;
}

export interface Frame {
  name: string;
  where: string;
  selfPercent: number;
}

const ROOT = new URL('..', import.meta.url).pathname;

/** Self time per function over one or more profiles (the threads of one process, summed). */
export function topFrames(files: string | readonly string[], top = 15, window?: Window): Frame[] {
  const self = new Map<string, number>();
  let total = 0;
  for (const file of typeof files === 'string' ? [files] : files) total += addSelfTimes(file, self, window);
  return sortedFrames(self, total, top);
}

/** Each sample of a profile (inside the window, when one is given): its node and the time it stands for. */
function* samples(file: string, window?: Window): Generator<{ node: ProfileNode; delta: number }> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  let at = profile.startTime;
  for (const [index, id] of profile.samples.entries()) {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (window && (at < window.from || at > window.to)) continue;
    yield { node: byId.get(id)!, delta };
  }
}

/** Waiting is not work: percentages are of the time the thread was busy. */
const isIdle = (node: ProfileNode): boolean => node.callFrame.functionName === '(idle)';

/** Adds a profile's self times (inside the window) to `self`; returns the busy time added. */
function addSelfTimes(file: string, self: Map<string, number>, window?: Window): number {
  let total = 0;
  for (const { node, delta } of samples(file, window)) {
    if (isIdle(node)) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? `${url.startsWith('file://') ? relative(ROOT, new URL(url).pathname) : url}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'}\t${where}`;
    self.set(key, (self.get(key) ?? 0) + delta);
    total += delta;
  }
  return total;
}

/** The share of a profile's sampled time inside the window that its thread was busy (not idle). */
export function busyShare(file: string, window: Window): number {
  let busy = 0;
  let all = 0;
  for (const { node, delta } of samples(file, window)) {
    all += delta;
    if (!isIdle(node)) busy += delta;
  }
  return all === 0 ? 0 : busy / all;
}

function sortedFrames(self: Map<string, number>, total: number, top: number): Frame[] {
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, micros]) => {
      const [name, where] = key.split('\t');
      return { name, where, selfPercent: (100 * micros) / total };
    });
}

/**
 * The profiles one process left in a directory: its main thread's and its worker threads'
 * (`CPU.<date>.<time>.<pid>.<thread id>.<n>.cpuprofile`; the main thread is thread 0).
 */
export function threadProfiles(dir: string): { main: string | null; workers: string[] } {
  const files = readdirSync(dir).filter((name) => name.endsWith('.cpuprofile')).sort();
  const threadOf = (name: string) => name.split('.')[4];
  const main = files.find((name) => threadOf(name) === '0');
  return { main: main ? join(dir, main) : null, workers: files.filter((name) => threadOf(name) !== '0').map((name) => join(dir, name)) };
}

export function framesTable(frames: readonly Frame[]): string {
  return ['| self % | function | where |', '|---:|---|---|', ...frames.map((f) => `| ${f.selfPercent.toFixed(1)} | \`${f.name}\` | ${f.where} |`)].join('\n');
}

if (process.argv[1] === new URL(import.meta.url).pathname && process.argv[2]) {
  console.log(framesTable(topFrames(process.argv[2], Number(process.argv[3] ?? 20))));
}
