// Exact o200k token counts over message content text only (never JSON envelope, tool arguments or
// non-text blocks, so adding cache_control can never look "worse"). Memoised by content so a warm
// turn never re-tokenizes what an earlier turn measured; bounded by total characters held.
import { createRequire } from 'node:module';
import type * as O200k from 'gpt-tokenizer/encoding/o200k_base';
import type { Message } from '../component';
import { messageText } from './message-text';
import { textMemo } from './text-memo';

const MEMO_MIN_CHARS = 24;

type Encoder = typeof O200k.countTokens;
let encoder: Encoder | undefined;

/**
 * The o200k encoder. Its table is loaded on the first call, not at import: it is ≈ 15 MB of JS heap
 * in ≈ 270k objects that every full garbage collection marks again, and a gateway whose pipelines
 * never count tokens (preset off) should not pay for it on each collection. A process that will
 * count calls this at boot, so its first request does not wait for the load (≈ 0.3–0.6 s here).
 */
export function loadTokenizer(): Encoder {
  return (encoder ??= (createRequire(__filename)('gpt-tokenizer/encoding/o200k_base') as typeof O200k).countTokens);
}

/** Exact o200k count, memoised by content. */
export const countTokens: (text: string) => number = textMemo(safeCount, 64 * 1024 * 1024, MEMO_MIN_CHARS);

/**
 * BPE merges within one pre-token cost quadratic time in its length: a 64 KB run of one character
 * class ('[[[[…', 'aaaa…') takes seconds. Runs this long are counted in pieces, which can differ
 * from the exact count by a token per piece; ordinary text never has them and counts exactly.
 */
const LONG_RUN = 1024;
const RUN_PIECE = 256;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function safeCount(text: string): number {
  if (text.length === 0) return 0;
  // Outside the try: a table that cannot be loaded is a broken install, not a text to estimate.
  const o200k = loadTokenizer();
  try {
    if (text.length < LONG_RUN) return o200k(text);
    let n = 0;
    let last = 0;
    let runStart = 0;
    // One linear pass: a whitespace-free run of LONG_RUN or more is counted piece by piece.
    for (let i = 0; i <= text.length; i++) {
      if (i < text.length && !isSpace(text.charCodeAt(i))) continue;
      if (i - runStart >= LONG_RUN) {
        n += o200k(text.slice(last, runStart));
        for (let p = runStart; p < i; p += RUN_PIECE) n += o200k(text.slice(p, Math.min(p + RUN_PIECE, i)));
        last = i;
      }
      runStart = i + 1;
    }
    return last === 0 ? o200k(text) : n + o200k(text.slice(last));
  } catch {
    return Math.ceil(text.length / 4);
  }
}

export function messageTokens(m: Message): number {
  return countTokens(messageText(m) ?? textOfBlocks(m));
}

function textOfBlocks(m: Message): string {
  if (!Array.isArray(m.content)) return '';
  let out = '';
  for (const b of m.content) if (b.type === 'text' && typeof b.text === 'string') out += b.text;
  return out;
}

export function totalTokens(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) n += messageTokens(m);
  return n;
}
