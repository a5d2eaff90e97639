// Validates UTF-8 across the chunks of a body that is forwarded as it arrives (never held whole):
// each chunk is checked up to its last complete sequence, and the 1–3 bytes of a sequence split
// across chunks are checked once the next chunk completes them.
import { isUtf8 } from 'node:buffer';
import { firstInvalidUtf8 } from './body-checks';

/** Bytes a sequence with this lead byte spans (0 for a continuation or invalid lead). */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** Where the incomplete sequence at the end of `b` starts (b.length when it ends complete). */
function incompleteTail(b: Buffer): number {
  for (let i = b.length - 1; i >= Math.max(0, b.length - 3); i--) {
    const c = b[i];
    if (c === undefined) break; // i is inside b
    if ((c & 0xc0) === 0x80) continue; // continuation byte: keep looking for its lead
    const n = sequenceLength(c);
    return n > 1 && i + n > b.length ? i : b.length;
  }
  return b.length;
}

export class Utf8StreamCheck {
  /** Byte offset of the first invalid byte, or -1 while the body is valid so far. */
  invalidAt = -1;
  private offset = 0;
  private carry: Buffer | null = null;

  /** Returns false once the body is known not to be UTF-8. */
  push(chunk: Buffer): boolean {
    if (this.invalidAt >= 0) return false;
    let from = 0;
    if (this.carry) {
      // The carry holds the first bytes of one incomplete sequence (never empty: readUInt8 checks).
      const need = sequenceLength(this.carry.readUInt8(0)) - this.carry.length;
      const joined = Buffer.concat([this.carry, chunk.subarray(0, need)]);
      if (joined.length < this.carry.length + need) {
        this.carry = joined;
        this.offset += chunk.length;
        return true;
      }
      if (!isUtf8(joined)) return this.fail(this.offset - this.carry.length + firstInvalidUtf8(joined));
      this.carry = null;
      from = need;
    }
    const end = incompleteTail(chunk);
    const body = chunk.subarray(from, end);
    if (!isUtf8(body)) return this.fail(this.offset + from + firstInvalidUtf8(body));
    if (end < chunk.length) this.carry = Buffer.from(chunk.subarray(end));
    this.offset += chunk.length;
    return true;
  }

  /** At the end of the body: a sequence still incomplete is invalid. */
  end(): boolean {
    if (this.invalidAt >= 0) return false;
    if (this.carry) return this.fail(this.offset - this.carry.length);
    return true;
  }

  private fail(at: number): false {
    this.invalidAt = at;
    return false;
  }
}
