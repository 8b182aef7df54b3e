import assert from 'node:assert/strict';

/**
 * Waits for a condition of background work (a render, a copy, another process's state) by
 * checking it every `everyMs`, and fails after `timeoutMs`: a bounded poll of state, never a
 * fixed sleep that assumes how long the work takes.
 */
export async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
