const NEWLINE = 0x0a;

export interface SplitResult {
  lines: Buffer[];
  /** True when the unfinished line is already longer than the limit allows. */
  overflow: boolean;
}

/**
 * Splits a byte stream into `\n`-terminated lines of at most `maxLineBytes` (newline included),
 * holding at most that many bytes of an unfinished line.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** Bytes held for the current unfinished line. */
  get buffered(): number {
    return this.pendingBytes;
  }

  push(chunk: Buffer): SplitResult {
    const lines: Buffer[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      const partLength = nl - start;
      if (this.pendingBytes + partLength + 1 > this.maxLineBytes) {
        this.reset();
        return { lines, overflow: true };
      }
      const part = chunk.subarray(start, nl);
      lines.push(this.pendingBytes === 0 ? part : Buffer.concat([...this.pending, part], this.pendingBytes + partLength));
      this.reset();
      start = nl + 1;
    }
    const rest = chunk.length - start;
    if (rest > 0) {
      if (this.pendingBytes + rest + 1 > this.maxLineBytes) {
        this.reset();
        return { lines, overflow: true };
      }
      // Copy: the caller's chunk may be a slice of a larger pooled buffer.
      this.pending.push(Buffer.from(chunk.subarray(start)));
      this.pendingBytes += rest;
    }
    return { lines, overflow: false };
  }

  reset(): void {
    this.pending = [];
    this.pendingBytes = 0;
  }
}
