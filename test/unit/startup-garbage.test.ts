/** cli/startup-garbage.ts: the collection before the service listens does collect. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collectStartupGarbage } from '../../src/cli/startup-garbage.js';

/** Makes `count` strings and keeps none (a function of its own: its frame holds them, then is gone). */
function leaveGarbage(count: number): number {
  const garbage: string[] = [];
  for (let i = 0; i < count; i++) garbage.push(`startup garbage ${i} `.repeat(4));
  return garbage.length;
}

describe('the collection before listening', () => {
  it('frees what is no longer reachable, as a full collection does', () => {
    // ~40 MB of strings, unreachable once the function returns: what loading modules leaves behind.
    assert.equal(leaveGarbage(400_000), 400_000);
    const before = process.memoryUsage().heapUsed;
    assert.equal(collectStartupGarbage(), true, 'the runtime let it collect');
    const after = process.memoryUsage().heapUsed;
    assert.ok(after < before - 20_000_000, `heap used ${before} → ${after} bytes`);
  });
});
