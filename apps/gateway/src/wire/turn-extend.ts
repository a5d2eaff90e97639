// A warm turn's view, built from the previous turn's view of the byte-identical prefix plus only
// what follows it: the new messages are parsed, normalized and scanned, nothing before them is
// read again. Everything after the prefix lies in the text's last piece (body-text.ts), so the
// scans run there as on a plain string, positions shifted.
import { cloneMessage, shareTexts, type Message } from '@context-guru/components';
import type { BodyText } from './body-text';
import { depthViolation, elementsAfter, skipWs, type Span } from './json-scan';
import { normalizeAnthropic } from './anthropic.wire';
import { normalizeOpenAI } from './openai.wire';
import { RawIndex } from './raw-index';
import { assembleView } from './request.wire';
import type { WireView } from './wire.types';

/** What a cached turn offers the next: its view and where its body's messages lie. */
export interface PrefixSource {
  view: WireView;
  /** Element spans of the body's `messages`. */
  spans: readonly Span[];
  arrayStart: number;
  /** Text after the messages array's closing bracket. */
  tail: string;
}

/** The shared prefix: whole body messages, and the normalized messages that come from them. */
export interface PrefixMatch {
  bodyMessages: number;
  normalized: number;
}

/** `text`'s first `k` body messages, known identical to `prev`'s, as a reusable prefix (or null). */
export function prefixOf(prev: PrefixSource, text: BodyText, k: number): PrefixMatch | null {
  const end = prev.spans[k - 1]?.end;
  if (end === undefined || end >= text.length) return null;
  const { s, at } = text.local(end);
  const next = s.charCodeAt(skipWs(s, end - at));
  if (next !== 0x2c && next !== 0x5d) return null; // ',' or ']' must follow an element
  let normalized = 0;
  for (const slot of prev.view.slots) {
    if (slot.msg >= k) break;
    normalized++;
  }
  return { bodyMessages: k, normalized };
}

/** The view of `text` built from the previous view's prefix plus the newly parsed messages. */
export function extendView(prev: PrefixSource, text: BodyText, m: PrefixMatch): WireView | null {
  try {
    const k = m.bodyMessages;
    const end = prev.spans[k - 1]?.end;
    if (end === undefined) return null; // prefixOf gives k ≥ 1 within the spans
    const { s, at } = text.local(end);
    // The rest must be one piece (it is, as the turn cache builds texts): else the full decode.
    if (at + s.length !== text.length) return null;
    const local = end - at;
    // The prefix was checked last turn; a too-deep new part goes to the full decode's precise 400.
    if (depthViolation(s, local) >= 0) return null;
    const fresh = elementsAfter(s, local);
    const [firstFresh] = fresh;
    const lastFresh = fresh.at(-1);
    const arrayEnd = skipWs(s, lastFresh ? lastFresh.end : local) + 1;
    const tail = s.slice(arrayEnd);
    // A second `messages` key later in the body would win in JSON.parse: leave that to the full path.
    if (tail.includes('"messages"')) return null;
    const rest =
      tail === prev.tail ? prev.view.body : (JSON.parse(`${text.slice(0, prev.arrayStart)}[]${tail}`) as Record<string, unknown>);
    const added: unknown[] = firstFresh && lastFresh ? (JSON.parse(`[${s.slice(firstFresh.start, lastFresh.end)}]`) as unknown[]) : [];
    const prevList = prev.view.body.messages as unknown[];
    const body: Record<string, unknown> = { ...rest, messages: [...prevList.slice(0, k), ...added] };
    const norm = prev.view.dialect === 'openai' ? normalizeOpenAI({ messages: added }) : normalizeAnthropic({ messages: added });
    shareTexts(norm.messages);
    const messages: Message[] = [...prev.view.messages.slice(0, m.normalized), ...norm.messages];
    const slots = [...prev.view.slots.slice(0, m.normalized), ...norm.slots.map((x) => ({ ...x, msg: x.msg + k }))];
    const original = [...prev.view.original.slice(0, m.normalized), ...norm.messages.map(cloneMessage)];
    const seed = prev.view.index.seedFor(k) ?? { arrayStart: prev.arrayStart, spans: prev.spans.slice(0, k) };
    const index = new RawIndex(text, seed);
    // Placeholders in the identical prefix were found last turn; only the new bytes are scanned.
    return assembleView(prev.view.dialect, body, { messages, slots }, original, index, {
      from: end,
      firstMarkerAt: prev.view.firstMarkerAt < end ? prev.view.firstMarkerAt : -1,
      firstSentinelAt: prev.view.firstSentinelAt < end ? prev.view.firstSentinelAt : -1,
      firstOneHourAt: prev.view.firstOneHourAt < end ? prev.view.firstOneHourAt : -1,
    });
  } catch {
    return null; // anything unexpected: the full decode gives the precise answer (or error)
  }
}
