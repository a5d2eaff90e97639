// What a test compares of the bodies the gateway forwarded: each message's raw bytes, the prompt's
// head, and the marker ids, as the provider's cache key and the expand tool see them.
import { createHash } from 'node:crypto';
import { RawIndex } from '../../libs/engine/src/wire/raw-index';

export const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;

/** Raw bytes of each element of a body's `messages`. */
export function rawMessages(raw: string): string[] {
  const index = new RawIndex(raw);
  const out: string[] = [];
  for (let i = 0; i < index.messageCount(); i++) {
    const s = index.message(i);
    if (s) out.push(raw.slice(s.start, s.end));
  }
  return out;
}

/** A message's bytes as the provider's cache key sees them: the client moves its breakpoint every turn. */
export const withoutBreakpoints = (raw: string): string => raw.replace(/,"cache_control":\{"type":"ephemeral"\}/g, '');

/** Raw bytes of the prompt's head: `tools` and `system`. */
export function head(raw: string): string {
  const index = new RawIndex(raw);
  return ['tools', 'system']
    .map((k) => {
      const span = index.topLevel(k);
      return span ? raw.slice(span.start, span.end) : '';
    })
    .join('\u0000');
}

/** The marker ids a forwarded body's messages carry (the expand tool's description names none). */
export function markerIds(raw: string): Set<string> {
  return new Set([...rawMessages(raw).join('\n').matchAll(MARKER)].map((m) => m[1] ?? ''));
}

/** The marker id of an original: the first 16 hex digits of its SHA-256. */
export function markerIdOf(original: string): string {
  return createHash('sha256').update(original).digest('hex').slice(0, 16);
}
