import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The entry of the build this bench run made, for the scripts it runs. */
const BUILT_ENTRY = 'PRICE_EXPORT_BENCH_BUILT_ENTRY';

/**
 * The service's command line as `npm start` runs it, compiled, not through tsx: built afresh into
 * .cache/bench-dist (not dist/, which others may be using) each time a bench starts, so it is
 * never a stale build. Through tsx a fresh server also transpiles and resolves the export's
 * modules while it serves its first export: ~8 ms more before a 100k-item export's first byte
 * (bench/RESULTS.md, "2026-11-27, before midnight"). `built` is false when the build failed and
 * tsx runs the same code instead.
 */
export function builtServiceCommand(root: string, log: (line: string) => void): { command: string[]; built: boolean } {
  // bench/run.ts builds it, then runs the figure scripts, which would build it again.
  const builtByParent = process.env[BUILT_ENTRY];
  if (builtByParent && existsSync(builtByParent)) return { command: [builtByParent], built: true };
  const out = join(root, '.cache', 'bench-dist');
  log('building the service into .cache/bench-dist …');
  // tsc emits even when another file of the tree has a type error; the entry's presence decides.
  spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out, '--sourceMap', 'false'], { stdio: 'ignore' });
  spawnSync(process.execPath, [join(root, 'scripts/copy-assets.mjs'), out], { stdio: 'ignore' });
  const entry = join(out, 'cli', 'index.js');
  if (existsSync(entry)) {
    // Inherited by the scripts this process runs (spawnSync passes its environment on).
    process.env[BUILT_ENTRY] = entry;
    return { command: [entry], built: true };
  }
  return { command: tsxServiceCommand(root), built: false };
}

/** The service's command line through tsx: the tree's TypeScript, transpiled as it loads. */
export const tsxServiceCommand = (root: string): string[] => ['--import', 'tsx', join(root, 'src/cli/index.ts')];
