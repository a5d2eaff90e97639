// Every memo in the pipeline is a Map keyed by text. A lookup whose string is the very instance
// stored is a pointer comparison; an equal text in another instance is compared in full (and V8
// hashes a text over 16,383 characters by its length alone, so such texts also share a bucket).
// A transcript re-sends the same content in separate JSON strings (a file read twice, a command
// re-run), so each turn paid full comparisons for every repeat. Decoding hands the pipeline one
// instance per distinct text instead: equal content, so every decision and byte is unchanged.
import type { Message } from '../component';
import { textMemo } from './text-memo';

/** Below this a comparison costs about what the look-up itself does. */
const MIN_CHARS = 256;

/** The first instance seen of `text` (bounded like the memos it serves). */
export const sharedText: (text: string) => string = textMemo((text) => text, 64 * 1024 * 1024, MIN_CHARS);

/** Replaces each message's text content with its shared instance (messages the caller just built). */
export function shareTexts(messages: readonly Message[]): void {
  for (const m of messages) {
    const c = m.content;
    if (typeof c === 'string') m.content = sharedText(c);
    else if (Array.isArray(c)) for (const b of c) if (b.type === 'text' && typeof b.text === 'string') b.text = sharedText(b.text);
  }
}
