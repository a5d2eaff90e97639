// A warm turn's view, built from the previous turn's view of the byte-identical prefix plus only
// what follows it: the new messages are parsed, normalized and scanned, nothing before them is
// read again. Everything after the prefix lies in the text's last piece (body-text.ts), so the
// scans run there as on a plain string, positions shifted.
import { cloneMessage, shareTexts, type Message } from '@context-guru/components';
import type { BodyText } from './body-text';
import { depthViolation, elementsAfter, skipWs, type Span } from './json-scan';
import { normalizeAnthropic } from './anthropic.wire';
import { normalizeOpenAI, type Normalized } from './openai.wire';
import { RawIndex } from './raw-index';
import { assembleView, listKey } from './request.wire';
import { normalizeResponses, responsesResumable } from './responses.wire';
import type { Dialect, WireView } from './wire.types';

/** Stands in for the list while the rest of the body is parsed; any other value there is a later duplicate key. */
const LIST_PLACEHOLDER = '"\\u0000context-guru list"';
const PLACEHOLDER_VALUE = '\u0000context-guru list';

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

/** The new elements alone as normalized messages (slots relative to them), or null when they cannot stand alone. */
function normalizeAdded(dialect: Dialect, prevList: readonly unknown[], k: number, added: unknown[]): Normalized | null {
  if (dialect === 'openai') return normalizeOpenAI({ messages: added });
  if (dialect === 'anthropic') return normalizeAnthropic({ messages: added });
  // Gemini's call ids and pairings depend on the contents before the new ones: decoded whole.
  if (dialect === 'gemini') return null;
  return responsesResumable(prevList, k, added) ? normalizeResponses({ input: added }) : null;
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
    const dialect = prev.view.dialect;
    const key = listKey(dialect);
    const rest =
      tail === prev.tail
        ? prev.view.body
        : (JSON.parse(`${text.slice(0, prev.arrayStart)}${LIST_PLACEHOLDER}${tail}`) as Record<string, unknown>);
    // A second list key later in the body would win in JSON.parse: leave that to the full path.
    if (tail !== prev.tail && rest[key] !== PLACEHOLDER_VALUE) return null;
    const added: unknown[] = firstFresh && lastFresh ? (JSON.parse(`[${s.slice(firstFresh.start, lastFresh.end)}]`) as unknown[]) : [];
    const prevList = prev.view.body[key];
    if (!Array.isArray(prevList)) return null;
    const norm = normalizeAdded(dialect, prevList, k, added);
    if (!norm) return null;
    const body: Record<string, unknown> = { ...rest, [key]: [...prevList.slice(0, k), ...added] };
    shareTexts(norm.messages);
    const messages: Message[] = [...prev.view.messages.slice(0, m.normalized), ...norm.messages];
    const slots = [...prev.view.slots.slice(0, m.normalized), ...norm.slots.map((x) => ({ ...x, msg: x.msg + k }))];
    const original = [...prev.view.original.slice(0, m.normalized), ...norm.messages.map(cloneMessage)];
    const seed = prev.view.index.seedFor(k) ?? { arrayStart: prev.arrayStart, spans: prev.spans.slice(0, k) };
    const index = new RawIndex(text, seed, key);
    // Placeholders in the identical prefix were found last turn; only the new bytes are scanned.
    return assembleView(dialect, body, { messages, slots }, original, index, {
      from: end,
      firstMarkerAt: prev.view.firstMarkerAt < end ? prev.view.firstMarkerAt : -1,
      firstSentinelAt: prev.view.firstSentinelAt < end ? prev.view.firstSentinelAt : -1,
      firstOneHourAt: prev.view.firstOneHourAt < end ? prev.view.firstOneHourAt : -1,
    });
  } catch {
    return null; // anything unexpected: the full decode gives the precise answer (or error)
  }
}
