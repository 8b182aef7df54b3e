import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * One full collection of what starting the service left behind (modules loaded, migrations run),
 * just before it listens. Without it, the old generation's first limit, set while the modules
 * were loading, is reached within the first requests: half of the fresh servers measured spent
 * 30–40 ms more CPU on V8's marking threads during their first 100k-item CSV export (100–105 ms
 * instead of 63–72), none after this (bench/RESULTS.md, "2026-11-27, before midnight"). A server
 * restarted into traffic (a rolling deploy) meets it at once; V8's memory reducer would only
 * collect after seconds of idleness.
 *
 * V8 gives no call to collect but `gc`, which the `--expose-gc` flag makes; set here, it is
 * given to the contexts made after it. Where the runtime refuses, nothing is collected.
 */
export function collectStartupGarbage(): boolean {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('typeof gc === "function" ? gc : null') as (() => void) | null;
    if (gc === null) return false;
    gc();
    return true;
  } catch {
    return false;
  }
}
