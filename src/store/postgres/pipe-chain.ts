import { FixedTextArgs } from '../fixed-text-args.js';
import { literal } from './sql-literal.js';

/**
 * A record as one `a || b || …` chain, for the rows a compiler knows need no escaping (their
 * quote_free bits): fixed text between two values is joined into one literal
 * (fixed-text-args.ts). On PostgreSQL `||` of texts is cheaper than concat(), which calls each
 * argument's output function, and the plain row needs no test per text: the server's COPY of
 * 100k legacy items to /dev/null, JSON 122 → 90 ms, XML 143 → 76 ms (bench/RESULTS.md,
 * "2026-11-26, last night"). A NULL value makes the whole chain NULL: a nullable value must be
 * wrapped (coalesce) by the caller.
 */
export class PipeChain extends FixedTextArgs {
  constructor() {
    super(literal);
  }

  /** The chain; null when it holds no value (the caller's other form serves it). */
  expression(): string | null {
    return this.hasValue ? this.list().join(' || ') : null;
  }
}

/** A row that needs nothing done: the test that says so, and its chain. */
export interface PlainRow {
  test: string;
  expression: string;
}

/** The test that a row's quote_free holds every one of `bits` (true for none). */
export const hasQuoteFreeBits = (bits: number | bigint): string => (bits === 0 || bits === 0n ? 'true' : `(quote_free & ${bits}) = ${bits}`);

/** A record's expression: the plain row's chain where its test holds, else the one for any row. */
export const plainRowOrAny = (plain: PlainRow | null, any: string): string =>
  plain ? `CASE WHEN ${plain.test} THEN ${plain.expression} ELSE ${any} END` : any;
