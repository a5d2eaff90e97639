// Exact o200k token counts over message content text only (never JSON envelope, tool arguments or
// non-text blocks, so adding cache_control can never look "worse"). Memoised by content so a warm
// turn never re-tokenizes what an earlier turn measured; bounded by total characters held.
import { countTokens as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import type { Message } from '../component';
import { messageText } from './message-text';
import { textMemo } from './text-memo';

const MEMO_MIN_CHARS = 24;

/** Exact o200k count, memoised by content. */
export const countTokens: (text: string) => number = textMemo(safeCount, 64 * 1024 * 1024, MEMO_MIN_CHARS);

function safeCount(text: string): number {
  if (text.length === 0) return 0;
  try {
    return o200k(text);
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
