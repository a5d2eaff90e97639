// A forwarded body kept as flat text pieces, each beside its UTF-8 bytes. A warm turn's body is
// the previous turn's up to the last reused message plus a newly encoded rest: cutting and
// extending pieces never builds (or flattens) the whole 1 MB string, and the bytes go upstream as
// chunks, so a turn encodes only its new text. Any whole-body string costs ≈ 1.6 ms on its own.

export interface OutChunks {
  /** Flat strings; texts[i] is exactly bytes[i] decoded, and each ends on a character boundary. */
  readonly texts: readonly string[];
  readonly bytes: readonly Buffer[];
}

/**
 * Pieces are merged when the newest is at least as large as the one before it (a binary counter:
 * a few pieces, each byte copied a logarithmic number of times over a session), and past this count.
 */
const MAX_CHUNKS = 16;

/** One piece: `text` with its bytes (encoded here unless the caller has them). */
export function chunksOf(text: string, bytes: Buffer = Buffer.from(text, 'utf8')): OutChunks {
  return { texts: [text], bytes: [bytes] };
}

/** The body as one string: a rope of the pieces, which nothing flattens unless it reads it. */
export function chunkText(c: OutChunks): string {
  let out = '';
  for (const t of c.texts) out += t;
  return out;
}

export function byteSize(c: OutChunks): number {
  return totalBytes(c.bytes);
}

export function totalBytes(bufs: readonly Buffer[]): number {
  let n = 0;
  for (const b of bufs) n += b.length;
  return n;
}

/**
 * Below this many bytes a chunked body is joined into one buffer: undici writes each chunk of an
 * iterable body with its own socket write (a syscall and a packet each, nothing corks them), which
 * for a 16 KB body of a few pieces cost more than the copy (~60 us of writes per request at one
 * connection against a few us of memcpy). Larger bodies (a warm 1 MB turn) keep their chunks,
 * at most a handful, so their bytes are never copied into a whole. A body sent again (a repeat)
 * is joined once and kept joined: a fresh buffer per request is external memory V8 answers with
 * mark-compacts of the whole heap, which doubled the agent's CPU per request in the bench.
 * @internal exported for its test
 */
export const JOIN_BELOW_BYTES = 256 * 1024;

/** `chunks` as one buffer when they are few bytes (see JOIN_BELOW_BYTES), else as they are. */
export function joinedIfSmall(chunks: readonly Buffer[]): Buffer | readonly Buffer[] {
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const length = totalBytes(chunks);
  return length < JOIN_BELOW_BYTES ? Buffer.concat(chunks, length) : chunks;
}

/** The leading `chars` characters (a position after an ASCII character), or null past the end. */
export function cutChunks(c: OutChunks, chars: number): OutChunks | null {
  const texts: string[] = [];
  const bytes: Buffer[] = [];
  let left = chars;
  for (let i = 0; i < c.texts.length && left > 0; i++) {
    const text = c.texts[i] ?? '';
    const buf = c.bytes[i] ?? Buffer.alloc(0);
    if (left >= text.length) {
      texts.push(text);
      bytes.push(buf);
      left -= text.length;
      continue;
    }
    texts.push(text.slice(0, left));
    bytes.push(buf.subarray(0, byteOffset(text, buf, left)));
    left = 0;
  }
  return left > 0 ? null : { texts, bytes };
}

/** The byte offset of character `at` in a piece, measured over the shorter side of it. */
function byteOffset(text: string, buf: Buffer, at: number): number {
  if (buf.length === text.length) return at; // all ASCII
  if (at <= text.length / 2) return Buffer.byteLength(text.slice(0, at), 'utf8');
  return buf.length - Buffer.byteLength(text.slice(at), 'utf8');
}

/** `c` followed by `text` (encoded here), with small trailing pieces merged. */
export function appendText(c: OutChunks, text: string): OutChunks {
  const texts = [...c.texts];
  const bytes = [...c.bytes];
  if (text.length) {
    texts.push(text);
    bytes.push(Buffer.from(text, 'utf8'));
  }
  for (let n = bytes.length; n >= 2; n = bytes.length) {
    const [last, before] = [bytes[n - 1], bytes[n - 2]];
    if (!last || !before || (last.length < before.length && n <= MAX_CHUNKS)) break;
    bytes.splice(n - 2, 2, Buffer.concat([before, last]));
    texts.splice(n - 2, 2, (texts[n - 2] ?? '') + (texts[n - 1] ?? ''));
    // The merged text is read (cut) next turn: flatten it now, while it is small.
    flatten(texts, n - 2);
  }
  return { texts, bytes };
}

/** Makes texts[i] a flat string (a concatenation is a rope until something reads it). */
function flatten(texts: string[], i: number): void {
  const t = texts[i];
  if (t !== undefined && t.length) t.charCodeAt(0);
}
