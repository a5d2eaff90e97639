// A request body read whole. With a declared length each chunk is copied, as it arrives, into one
// buffer of that size, so the socket's read buffers can go as soon as they are read: collecting
// chunks and joining them at the end held every body twice at the moment it completed — under a
// burst of large bodies completing together, a second copy of all of them at once.

export class BodyCollector {
  private whole: Buffer | null;
  private chunks: Buffer[] = [];
  private size = 0;

  /** `declared`: the content-length (-1 when the body is chunked); `limit`: the most kept. */
  constructor(
    declared: number,
    private readonly limit: number,
  ) {
    this.whole = declared >= 0 && declared <= limit ? Buffer.allocUnsafe(declared) : null;
  }

  add(chunk: Buffer): void {
    const at = this.size;
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.chunks.length = 0;
      this.whole = null;
      return;
    }
    if (this.whole && this.size <= this.whole.length) chunk.copy(this.whole, at);
    else {
      // More than declared (the HTTP parser never delivers that; kept correct regardless).
      if (this.whole) this.chunks.push(this.whole.subarray(0, at));
      this.whole = null;
      this.chunks.push(chunk);
    }
  }

  /** The body, or null when it went over the limit. */
  done(): Buffer | null {
    if (this.size > this.limit) return null;
    if (this.whole) return this.size === this.whole.length ? this.whole : this.whole.subarray(0, this.size);
    return Buffer.concat(this.chunks, this.size);
  }
}
