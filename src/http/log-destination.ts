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
 * sonic-boom fed each line as bytes (its buffer mode). Fed strings, it joins a line to the
 * pending write's text and measures that text's byte length again for every line: with 16 KiB
 * writes, ~13 % of the 304s a second (bench/RESULTS.md, "The log's write size"). As bytes, a
 * line costs its own encoding and the pending writes keep their lengths as numbers. sonic-boom
 * still writes what is pending on exit (pino.destination registers it).
 */
export function gatheredLines(fd: number): pino.DestinationStream & { flushSync(): void } {
  const destination = pino.destination({ dest: fd, sync: false, maxWrite: LOG_WRITE_BYTES, contentMode: 'buffer' });
  return {
    write: (line: string) => destination.write(Buffer.from(line) as unknown as string),
    flushSync: () => destination.flushSync(),
  };
}
