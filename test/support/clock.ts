/**
 * A clock that moves only when the test moves it: the rate limits' windows and back-off read it
 * instead of Date.now, so no test waits for a minute boundary or measures elapsed time.
 */
export interface TestClock {
  /** Pass this where the code takes a `now()` clock. */
  now: () => number;
  advance(ms: number): void;
}

/**
 * Starts `intoWindowMs` into a real minute (a realistic epoch, so Redis keys look like the
 * service's; the clock never moves by itself).
 */
export function testClock(intoWindowMs = 1_000): TestClock {
  let time = Math.floor(Date.now() / 60_000) * 60_000 + intoWindowMs;
  return { now: () => time, advance: (ms) => { time += ms; } };
}
