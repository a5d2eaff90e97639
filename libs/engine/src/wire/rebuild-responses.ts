// The count-changing write-back (rebuild.ts) for the Responses API's `input` items: the pipeline
// replaced one contiguous run of normalized messages (summarize) by new text messages. A body item
// is dropped exactly when what it stands for was: a message or a tool output by its own slots, a
// call by the turn it joined, a reasoning item with the item it precedes (the API pairs them), an
// output without text with its call. Compaction items, item references, built-in tool calls and
// item types we do not know are never dropped: a run that would drop one declines. So does a body
// that continues a stored response or conversation: its history is not in the body, so there is
// no middle to summarize it from. Kept items keep their received bytes (plus planned edits).
import { isObject, type Message } from '@context-guru/components';
import { alignRebuild, checkedBody, freshTexts, renderRaw, type PlanFn, type Rebuilt } from './rebuild';
import { itemType } from './responses.wire';
import { sameMessage } from './splice';
import type { Edit, WireView } from './wire.types';

const CALLS = new Set(['function_call', 'custom_tool_call']);
const OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output']);
/** The owner of an item that is never dropped. */
const ALWAYS = -1;

const typeAt = (items: readonly unknown[], i: number): string => {
  const item = items[i];
  return isObject(item) ? itemType(item) : '';
};

/** A call without a slot of its own joined the turn before it (reasoning between them aside). */
function callOwner(items: readonly unknown[], owner: readonly (number | null)[], i: number): number | null {
  let j = i - 1;
  while (j >= 0 && typeAt(items, j) === 'reasoning') j--;
  const t = typeAt(items, j);
  return CALLS.has(t) || t === 'message' ? (owner[j] ?? null) : null;
}

/** An output without text follows its call. */
function outputOwner(items: readonly unknown[], owner: readonly (number | null)[], i: number): number | null {
  const id = (items[i] as Record<string, unknown>).call_id;
  for (let j = i - 1; j >= 0; j--) {
    const item = items[j];
    if (isObject(item) && CALLS.has(itemType(item)) && item.call_id === id) return owner[j] ?? null;
  }
  return null;
}

/** For each item, the item whose slots decide its fate (ALWAYS: kept whatever happens); null declines. */
function owners(view: WireView, items: readonly unknown[]): number[] | null {
  const slotted = new Set(view.slots.map((s) => s.msg));
  const owner: Array<number | null> = items.map((_, i) => (slotted.has(i) ? i : null));
  for (let i = 0; i < items.length; i++) {
    if (owner[i] !== null) continue;
    const t = typeAt(items, i);
    if (t === 'reasoning') continue; // after this pass, from the item it precedes
    if (CALLS.has(t)) owner[i] = callOwner(items, owner, i);
    else if (OUTPUTS.has(t)) owner[i] = outputOwner(items, owner, i);
    else owner[i] = ALWAYS;
    if (owner[i] === null) return null;
  }
  for (let i = items.length - 1; i >= 0; i--) if (owner[i] === null) owner[i] = owner[i + 1] ?? null;
  return owner.every((o): o is number => o !== null) ? owner : null;
}

/** Whether each item survives, from the normalized messages `map` keeps; null when one item's slots disagree. */
function itemFates(view: WireView, owner: readonly number[], map: readonly number[]): boolean[] | null {
  const kept = new Set(map.filter((j) => j >= 0));
  const fateOf = new Map<number, boolean>();
  for (const [j, slot] of view.slots.entries()) {
    const fate = kept.has(j);
    if (fateOf.get(slot.msg) === !fate) return null;
    fateOf.set(slot.msg, fate);
  }
  return owner.map((o) => o === ALWAYS || fateOf.get(o) === true);
}

/** A new message as a Responses message item: text parts of the kind its role writes. */
function freshItem(m: Message, texts: readonly string[]): string {
  const part = m.role === 'assistant' ? 'output_text' : 'input_text';
  return JSON.stringify({ type: 'message', role: m.role, content: texts.map((text) => ({ type: part, text })) });
}

/** The planned edits of every kept message that changed, by body item; null when one cannot be planned. */
function keptEdits(view: WireView, out: readonly Message[], map: readonly number[], planFn: PlanFn): Map<number, Edit[]> | null {
  const edits = new Map<number, Edit[]>();
  for (const [i, m] of out.entries()) {
    const j = map[i] ?? -1;
    const orig = view.original[j];
    const slot = view.slots[j];
    if (j < 0 || !orig || !slot || sameMessage(orig, m)) continue;
    const p = planFn(j, orig, m);
    if (!p) return null;
    edits.set(slot.msg, [...(edits.get(slot.msg) ?? []), ...p.edits]);
  }
  return edits;
}

/** The new messages as message items, in order; null when one is not text alone. */
function freshItems(out: readonly Message[], map: readonly number[]): string[] | null {
  const fresh: string[] = [];
  for (const [i, m] of out.entries()) {
    if ((map[i] ?? -1) >= 0) continue;
    const texts = freshTexts(m);
    if (!texts) return null;
    fresh.push(freshItem(m, texts));
  }
  return fresh;
}

/** The kept items' bytes (with their edits), the new items in place of the first dropped one. */
function renderItems(view: WireView, fates: readonly boolean[], edits: Map<number, Edit[]>, fresh: readonly string[]): string[] | null {
  const first = fates.indexOf(false);
  const rendered: string[] = [];
  for (let b = 0; b < fates.length; b++) {
    if (b === first) rendered.push(...fresh);
    if (!fates[b]) continue;
    const text = renderRaw(view, { kind: 'raw', body: b, role: 'user', edits: edits.get(b) ?? [], appended: [] });
    if (text === null) return null;
    rendered.push(text);
  }
  return rendered;
}

/** Whether the dropped items are one run (the new messages go in its place). */
function oneRun(fates: readonly boolean[]): boolean {
  const first = fates.indexOf(false);
  const keptAfter = fates.indexOf(true, first);
  return first >= 0 && (keptAfter < 0 || keptAfter > fates.lastIndexOf(false));
}

/** The rebuilt Responses body, or null to decline. `inj` is the expand-tool edit when one is wanted. */
export function rebuildResponses(view: WireView, out: readonly Message[], inj: Edit | null, planFn: PlanFn): Rebuilt | null {
  const body = view.body;
  if (typeof body.previous_response_id === 'string' || body.conversation !== undefined || !Array.isArray(body.input)) return null;
  const map = alignRebuild(view.original, out);
  const owner = map && owners(view, body.input as unknown[]);
  const fates = map && owner && itemFates(view, owner, map);
  const edits = map && fates && oneRun(fates) ? keptEdits(view, out, map, planFn) : null;
  const fresh = map && edits && freshItems(out, map);
  const rendered = fates && edits && fresh && renderItems(view, fates, edits, fresh);
  return rendered ? checkedBody(view, rendered, inj) : null;
}
