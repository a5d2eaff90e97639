// A body's text as flat strings laid end to end. A warm turn is the previous turn's text up to
// the messages they share plus the newly decoded rest, and joining the two into one string costs
// a copy of the whole transcript (V8 flattens a concatenation the first time a character of it is
// read): 1.2 ms for a 200 KB body here, most of a 1 MB warm turn. Pieces are cut only where an
// element of `messages` ends, so every JSON value the gateway reads inside a message, and every
// top-level member but `messages`, lies inside one piece: scans run on that piece as a plain
// string, positions shifted. `whole()` builds the one string for the rare reader that needs it.

/** Fewest characters at which V8 keeps a substring as a view of its parent instead of a copy. */
const SLICE_SHARES_FROM = 13;

export class BodyText {
  readonly length: number;
  private rope: string | undefined;

  private constructor(
    private readonly pieces: readonly string[],
    /** starts[i]: where pieces[i] begins in the text. */
    private readonly starts: readonly number[],
  ) {
    const last = pieces.length - 1;
    this.length = last < 0 ? 0 : (starts[last] ?? 0) + (pieces[last]?.length ?? 0);
    if (pieces.length === 1) this.rope = pieces[0];
  }

  static of(text: string): BodyText {
    return new BodyText([text], [0]);
  }

  get pieceCount(): number {
    return this.pieces.length;
  }

  /** This text's first `end` characters (end ≤ length, > 0) followed by `rest`. */
  prefixPlus(end: number, rest: string): BodyText {
    if (end <= 0 || end > this.length) throw new RangeError(`prefix end ${end} outside 0..${this.length}`);
    const i = this.indexOfPiece(end - 1);
    const pieces = this.pieces.slice(0, i + 1);
    const starts = this.starts.slice(0, i + 1);
    const cut = end - (starts[i] ?? 0);
    const last = pieces[i] ?? '';
    if (cut < last.length) pieces[i] = last.slice(0, cut);
    if (rest.length) {
      pieces.push(rest);
      starts.push(end);
    }
    return new BodyText(pieces, starts);
  }

  /** The piece holding `pos` (the last one for pos = length) and where it begins. */
  local(pos: number): { s: string; at: number } {
    const i = this.indexOfPiece(pos);
    return { s: this.pieces[i] ?? '', at: this.starts[i] ?? 0 };
  }

  charCodeAt(pos: number): number {
    const { s, at } = this.local(pos);
    return s.charCodeAt(pos - at);
  }

  charAt(pos: number): string {
    const { s, at } = this.local(pos);
    return s.charAt(pos - at);
  }

  /** Characters [start, end): a view of one piece, or the parts of several joined. */
  slice(start: number, end = this.length): string {
    const from = Math.max(0, Math.min(start, this.length));
    const to = Math.max(from, Math.min(end, this.length));
    if (from === to) return '';
    let i = this.indexOfPiece(from);
    let out = '';
    for (let pos = from; pos < to; i++) {
      const s = this.pieces[i] ?? '';
      const at = this.starts[i] ?? 0;
      const stop = Math.min(to, at + s.length);
      out += s.slice(pos - at, stop - at);
      pos = stop;
    }
    return out;
  }

  /** Where `needle` first occurs at or after `from` (-1: nowhere), across piece boundaries too. */
  indexOf(needle: string, from = 0): number {
    const first = this.indexOfPiece(Math.min(Math.max(0, from), this.length));
    for (let i = first; i < this.pieces.length; i++) {
      const s = this.pieces[i] ?? '';
      const at = this.starts[i] ?? 0;
      const found = s.indexOf(needle, Math.max(0, from - at));
      if (found >= 0) return found + at;
      const next = this.pieces[i + 1];
      // A match straddling the boundary has at most needle.length - 1 characters on each side.
      if (next !== undefined && needle.length > 1) {
        const tail = s.slice(-(needle.length - 1));
        const edgeAt = at + s.length - tail.length;
        const edge = (tail + next.slice(0, needle.length - 1)).indexOf(needle, Math.max(0, from - edgeAt));
        if (edge >= 0) return edgeAt + edge;
      }
    }
    return -1;
  }

  /** The text as one string: the only piece, or the pieces joined (never read on a warm turn's path). */
  whole(): string {
    if (this.rope === undefined) {
      let out = '';
      for (const s of this.pieces) out += s;
      this.rope = out;
    }
    return this.rope;
  }

  /**
   * The same text with its last piece as a copy of exactly the characters up to `end`: a piece
   * decoded whole holds the body after its messages too (tools, system), which a later turn's
   * prefix would otherwise keep alive through its views of it.
   */
  trimmedTo(end: number, copy: (start: number, end: number) => string | undefined): BodyText {
    const i = this.pieces.length - 1;
    const at = this.starts[i] ?? 0;
    const last = this.pieces[i] ?? '';
    if (i <= 0 || end <= at || end - at >= last.length || end - at < SLICE_SHARES_FROM) return this;
    const exact = copy(at, end);
    if (exact === undefined || exact.length !== end - at) return this;
    return new BodyText([...this.pieces.slice(0, i), exact], this.starts);
  }

  private indexOfPiece(pos: number): number {
    const starts = this.starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
