const NEWLINE = 0x0a;

/**
 * Splits a byte stream into `\n`-terminated lines of at most `maxLineBytes` (newline included),
 * holding at most that many bytes of an unfinished line. Lines are handed on as UTF-8 text: a
 * newline byte is never part of a multi-byte sequence, so decoding each line alone reads the
 * same text as decoding the stream whole, and the limit stays one of bytes.
 */
export class LineSplitter {
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  readonly #maxLineBytes: number;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /** Bytes held for the current unfinished line. */
  get buffered(): number {
    return this.#pendingBytes;
  }

  /**
   * Calls `onLine` with each complete line of `chunk` (without its newline), in order. Returns
   * `true` when a line is longer than the limit allows: the lines before it were handed on, and
   * the rest of the chunk and the unfinished line are dropped.
   */
  push(chunk: Buffer, onLine: (line: string) => void): boolean {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      if (this.#pendingBytes + (nl - start) + 1 > this.#maxLineBytes) {
        this.reset();
        return true;
      }
      // Decoding a range of the chunk makes no intermediate Buffer (the common case: a request
      // arrives whole in one chunk).
      let line: string;
      if (this.#pendingBytes === 0) {
        line = chunk.toString('utf8', start, nl);
      } else {
        this.#pending.push(chunk.subarray(start, nl));
        line = Buffer.concat(this.#pending, this.#pendingBytes + (nl - start)).toString('utf8');
        this.reset();
      }
      start = nl + 1;
      onLine(line);
    }
    const rest = chunk.length - start;
    if (rest > 0) {
      if (this.#pendingBytes + rest + 1 > this.#maxLineBytes) {
        this.reset();
        return true;
      }
      // Copy: the caller's chunk may be a slice of a larger pooled buffer.
      this.#pending.push(Buffer.from(chunk.subarray(start)));
      this.#pendingBytes += rest;
    }
    return false;
  }

  reset(): void {
    this.#pending = [];
    this.#pendingBytes = 0;
  }
}
