import pino from 'pino';

/**
 * The most a write of the log gathers: sonic-boom's default, 16 KiB. sonic-boom has one write in
 * flight and starts the next from its completion, so a write's size bounds how fast the log can
 * go out. At 2 KiB (tried on 2026-11-25 because sonic-boom's per-line `Buffer.byteLength` of the
 * gathered string cost ~13 % of the 304s a second) a saturated server logged slower than it
 * answered: in the publish storm of bench/figures/fleet-scale.ts its pending log grew to 2.5 GB
 * and its lines reached the reader minutes late (bench/RESULTS.md, "The log's write size").
 */
const LOG_WRITE_BYTES = 16 * 1024;

/**
 * How long a line waits for others before it goes out. sonic-boom writes a line at once when no
 * write is under way: at a few hundred requests a second each line was a write of its own on
 * libuv's thread pool (a thread woken, write(2), the main thread woken again): ~27 % of the main
 * thread's busy time, and gathered the process's CPU a request at 200 a second fell by a third on
 * a host whose system calls cost ~1 µs (bench/RESULTS.md, "2026-12-06"). Lines wait at most this
 * long; a process killed outright loses at most these.
 */
export const LOG_GATHER_MS = 50;

/** Runs `run` after `ms` without keeping the process alive; returns how to cancel it. Tests pass their own. */
export type Later = (run: () => void, ms: number) => () => void;
const unrefTimer: Later = (run, ms) => {
  const timer = setTimeout(run, ms).unref();
  return () => clearTimeout(timer);
};

/**
 * The log's lines gathered for up to LOG_GATHER_MS (or until 16 KiB wait), then handed to
 * sonic-boom as one piece of bytes (its buffer mode). Fed strings, sonic-boom joins a line to the
 * pending write's text and measures that text's byte length again for every line: with 16 KiB
 * writes, ~13 % of the 304s a second (bench/RESULTS.md, "The log's write size"). What is pending
 * is written on exit, here and in sonic-boom.
 *
 * Gathered here rather than by sonic-boom's own `minLength`: a `flush()` that finds a write under
 * way does nothing, and that write's completion leaves up to `minLength` bytes unwritten until the
 * next line; its `periodicFlush` would wake an idle process for ever. This timer runs only while
 * lines wait.
 */
export function gatheredLines(fd: number, later: Later = unrefTimer): pino.DestinationStream & { flushSync(): void } {
  const destination = pino.destination({ dest: fd, sync: false, maxWrite: LOG_WRITE_BYTES, contentMode: 'buffer' });
  let lines: Buffer[] = [];
  let bytes = 0;
  let cancel: (() => void) | null = null;
  const handOver = () => {
    cancel?.();
    cancel = null;
    if (bytes === 0) return;
    destination.write((lines.length === 1 ? lines[0] : Buffer.concat(lines, bytes)) as unknown as string);
    lines = [];
    bytes = 0;
  };
  const flushSync = () => {
    handOver();
    destination.flushSync();
  };
  process.on('exit', flushSync);
  return {
    write(line: string) {
      const buffer = Buffer.from(line);
      lines.push(buffer);
      bytes += buffer.length;
      if (bytes >= LOG_WRITE_BYTES) handOver();
      else cancel ??= later(handOver, LOG_GATHER_MS);
    },
    flushSync,
  };
}
