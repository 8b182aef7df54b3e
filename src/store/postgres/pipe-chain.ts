import { literal } from './sql-literal.js';

/**
 * A record as one `a || b || …` chain, for the rows a compiler knows need no escaping (their
 * quote_free bits): fixed text between two values is joined into one literal. On PostgreSQL
 * `||` of texts is cheaper than concat(), which calls each argument's output function, and the
 * plain row needs no test per text: the server's COPY of 100k legacy items to /dev/null, JSON
 * 122 → 90 ms, XML 143 → 76 ms (bench/RESULTS.md, "2026-11-26, last night"). A NULL value
 * makes the whole chain NULL: a nullable value must be wrapped (coalesce) by the caller.
 */
export class PipeChain {
  private readonly pieces: string[] = [];
  private fixed = '';

  text(text: string): void {
    this.fixed += text;
  }

  /** A text expression, never NULL. */
  value(expression: string): void {
    this.flush();
    this.pieces.push(expression);
  }

  /** The chain; null when it holds no value (the caller's other form serves it). */
  expression(): string | null {
    if (this.pieces.length === 0) return null;
    this.flush();
    return this.pieces.join(' || ');
  }

  private flush(): void {
    if (this.fixed !== '') this.pieces.push(literal(this.fixed));
    this.fixed = '';
  }
}
