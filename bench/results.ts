/* RESULTS.md from the figures of bench/run.ts: the machine, the table, the profiles. */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import type { Window } from './cpu-profile.js';

export interface Figure {
  figure: string;
  measured: string;
  reference: string;
  /** Ours ÷ reference (higher is better), or null where the goal is not a ratio. */
  ratio: number | null;
  /** The same ratio per CPU-second of each side, robust to other load on the machine. */
  cpuRatio?: number | null;
  goal: string;
  met: boolean;
  /** Re-runs the scenario under `--cpu-prof` when the goal is missed; returns the span to read the profile in. */
  profile?: (nodeFlags: string[]) => Promise<Window>;
}

export interface Results {
  figures: readonly Figure[];
  notes: readonly string[];
  /** Details after the table: per-format tables, profiles, other scripts' output. */
  sections: readonly string[];
  quick: boolean;
  /** The previous RESULTS.md: its hand-written analysis block is kept. */
  previous: string;
}

function machine(): string {
  const cpu = cpus();
  let load = '';
  try {
    load = execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    load = '(uptime unavailable)';
  }
  return [
    `- CPU: ${cpu[0]?.model ?? 'unknown'}, ${cpu.length} cores`,
    `- memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    `- Node ${process.version}, ${process.platform} ${process.arch}`,
    `- date: ${new Date().toISOString()}`,
    `- load when written: ${load}`,
  ].join('\n');
}

/** The hand-written reading of the figures, between its markers, kept across runs. */
function analysis(previous: string): string {
  const kept = /<!-- analysis -->[\s\S]*?<!-- \/analysis -->/.exec(previous)?.[0];
  return kept ?? '<!-- analysis -->\n## What limits the missed figures\n\n(to be written from the profiles below)\n<!-- /analysis -->';
}

// Three decimals below 1, so a figure just under its goal does not print as the goal (0.995× is not 1.00×).
const ratio = (value: number | null | undefined) => (value == null ? '—' : `${value.toFixed(value < 1 ? 3 : 2)}×`);

export function renderResults(results: Results): string {
  const table = [
    '| figure | measured | reference | ratio (wall) | ratio (CPU-s) | goal | met |',
    '|---|---|---|---:|---:|---|---|',
    ...results.figures.map((f) => `| ${f.figure} | ${f.measured} | ${f.reference} | ${ratio(f.ratio)} | ${ratio(f.cpuRatio)} | ${f.goal} | ${f.met ? 'yes' : '**no**'} |`),
  ].join('\n');
  const notes = results.notes.length > 0 ? `## Notes\n\n${results.notes.map((n) => `- ${n}`).join('\n')}\n\n` : '';
  return `# Benchmark results

Written by \`npm run bench\` (bench/run.ts)${results.quick ? ' with --quick: reduced sizes, not figures to quote' : ''}.

## Machine

${machine()}

The machine is shared with other work: every figure is a ratio to a reference measured in the
same run, on the same machine, minutes apart. "ratio (CPU-s)" compares the CPU seconds each side
used (the service process alone vs the reference process), which other load disturbs less.

Each figure is the median of at least five alternating rounds, with its min–max beside it,
never the best round. A figure is met only when every round is on its goal's side: a median
past the goal with a round short of it is on the goal line, and that is not met.

## Figures

${table}

${notes}${analysis(results.previous)}

## Details

${results.sections.join('\n\n')}
`;
}
