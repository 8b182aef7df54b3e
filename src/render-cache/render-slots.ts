/**
 * At most `size` pieces of work at once, the others waiting their turn in the order they asked.
 * The warmer takes one slot per render (export-warming.ts), so warming several stores at once
 * bounds the renders of them all, not only each one's.
 */
export function renderSlots(size: number): <T>(work: () => Promise<T>) => Promise<T> {
  let free = Math.max(1, size);
  const waiting: Array<() => void> = [];
  return async (work) => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The slot passes straight to the oldest waiter, or is freed.
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}
