// Withdrawing the client's prompt-cache breakpoints from the newest turn (cacheinject's
// withdraw_min_tokens): every `cache_control` member of the body messages after the prefix
// boundary — on the message, its blocks and a tool_result's content parts — is cut out with its
// comma, so the provider does not write to its cache what the next turn replaces by a marker.
// Only cache metadata goes; no text moves. A member not spelled plainly is left where it is.
import type { BodyText } from './body-text';
import type { Span } from './json-scan';
import { elements, members } from './text-scan';
import type { Edit, WireView } from './wire.types';

const KEY = '"cache_control"';
const WS = ' \t\n\r';

function skipBack(raw: BodyText, i: number): number {
  while (i > 0 && WS.includes(raw.charAt(i))) i--;
  return i;
}

function skipForward(raw: BodyText, i: number, end: number): number {
  while (i < end && WS.includes(raw.charAt(i))) i++;
  return i;
}

/** The edit removing the member whose value spans `value` inside the object `obj`, with one comma. */
function memberRemoval(raw: BodyText, obj: Span, value: Span): Edit | null {
  const colon = skipBack(raw, value.start - 1);
  if (raw.charAt(colon) !== ':') return null;
  const keyEnd = skipBack(raw, colon - 1) + 1;
  const keyStart = keyEnd - KEY.length;
  if (keyStart <= obj.start || raw.slice(keyStart, keyEnd) !== KEY) return null;
  const before = skipBack(raw, keyStart - 1);
  if (raw.charAt(before) === ',') return { start: before, end: value.end, text: '', withdrawal: true };
  // The first member: the comma after it goes instead (a block always has a `type` besides).
  const after = skipForward(raw, value.end, obj.end);
  if (raw.charAt(after) !== ',') return null;
  return { start: keyStart, end: after + 1, text: '', withdrawal: true };
}

/** The object at `obj`: its own breakpoint, then those of every object in its `content` array. */
function objectRemovals(raw: BodyText, obj: Span, out: Edit[]): void {
  if (raw.charAt(obj.start) !== '{') return;
  for (const m of members(raw, obj.start)) {
    if (m.key === 'cache_control') {
      const edit = memberRemoval(raw, obj, m.value);
      // A duplicated key's two removals may share a comma: the second waits for another turn.
      const last = out[out.length - 1];
      if (edit && !(last && last.end > edit.start)) out.push(edit);
    } else if (m.key === 'content' && raw.charAt(m.value.start) === '[') {
      for (const el of elements(raw, m.value.start)) objectRemovals(raw, el, out);
    }
  }
}

/**
 * The removals for every body message after the one holding normalized message `boundary`
 * (Anthropic bodies: messages, their blocks, tool_result parts), disjoint and in order.
 */
export function withdrawalEdits(view: WireView, boundary: number): Edit[] {
  const from = view.slots[boundary]?.msg;
  const list = view.body.messages;
  if (from === undefined || !Array.isArray(list)) return [];
  const out: Edit[] = [];
  for (let i = from + 1; i < list.length; i++) {
    const span = view.index.message(i);
    if (span) objectRemovals(view.text, span, out);
  }
  return out;
}
