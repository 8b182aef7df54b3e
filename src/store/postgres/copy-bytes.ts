/**
 * A binary COPY's bytes kept whole (the CopyData messages' bodies one after another: the format
 * PostgreSQL's docs give for a COPY file), for native-copy-records.ts, whose C reads the rows
 * and checks the signature and the trailer itself. Gathered in blocks of BLOCK_BYTES and joined
 * once when taken: no doubling buffer copied again and again as a page grows.
 */
const BLOCK_BYTES = 1024 * 1024;

export class CopyBytes {
  readonly wholeMessages = true;
  private blocks: Buffer[] = [];
  private out: Buffer = Buffer.allocUnsafe(0);
  private written = 0;

  /** A piece of the COPY: any bytes, in order. */
  push(chunk: Uint8Array, start = 0, end = chunk.length): void {
    while (start < end) {
      if (this.written === this.out.length) {
        this.fill();
        this.out = Buffer.allocUnsafe(BLOCK_BYTES);
      }
      const used = Math.min(end - start, this.out.length - this.written);
      this.out.set(chunk.subarray(start, start + used), this.written);
      this.written += used;
      start += used;
    }
  }

  /** A whole CopyData message's body (copy-frames.ts wholeMessages): like any piece. */
  record(chunk: Uint8Array, start: number, end: number): void {
    this.push(chunk, start, end);
  }

  /** Always: a piece need not end a row. */
  betweenRows(): boolean {
    return true;
  }

  /** The bytes so far, as one Buffer (none when none). */
  take(): Buffer[] {
    this.fill();
    const blocks = this.blocks;
    this.blocks = [];
    this.out = Buffer.allocUnsafe(0);
    if (blocks.length <= 1) return blocks;
    return [Buffer.concat(blocks)];
  }

  /** The C reads the trailer: nothing to check here. */
  end(): void {}

  private fill(): void {
    if (this.written > 0) this.blocks.push(this.out.subarray(0, this.written));
    this.written = 0;
  }
}
