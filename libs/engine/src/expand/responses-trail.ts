// The expand trail of a Responses answer (docs/cache.md): the provider saw each withheld
// context_guru_expand call and its function_call_output right after some item the client did see;
// the client's next request carries that item but not them. Each run of withheld items is frozen
// under the identity of the visible item before it (or, when the answer opened with the call, the
// visible item after it) and spliced back next to that item on every later turn, so the provider
// keeps seeing the bytes it was shown and the model keeps the originals it asked for.
import { contentKey, frozenSlot, type SessionSnapshot } from '@context-guru/components';
import { field, isObject, parseJson, str } from './json-shape';
import { isExpandItem, outputItems, responsesResultItem } from './responses-expand';
import { TRAIL_COMPONENT } from './trail';
import type { Edit, WireView } from '../wire/wire.types';
import type { AnswerRound, ResponsesTrail } from './expand.types';

const VERSION = 1;

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => str(field(p, 'text')) ?? '').join('');
}

/** What identifies an item the client echoes back (never fields a client may re-serialise differently). */
function itemIdentity(item: unknown): string | null {
  if (!isObject(item)) return null;
  const type = str(item['type']) ?? (typeof item['role'] === 'string' ? 'message' : '');
  if (type === 'reasoning') return `r:${str(item['encrypted_content']) ?? str(item['id']) ?? ''}`;
  if (type === 'message') return item['role'] === 'assistant' ? `m:${partsText(item['content'])}` : null;
  if (type === 'function_call' || type === 'custom_tool_call') return `c:${str(item['call_id']) ?? ''}`;
  return null;
}

function anchorKey(identity: string): string {
  return contentKey(JSON.stringify([`${TRAIL_COMPONENT}/responses`, identity]));
}

/** The trails of an answer given as its rounds (the last one's results resolved by the caller). */
export function buildResponsesTrails(rounds: readonly AnswerRound[]): ResponsesTrail[] | null {
  const trails: ResponsesTrail[] = [];
  let anchor: string | null = null;
  let withheld: string[] = [];
  const flush = (at: 'after' | 'before', identity: string) => {
    trails.push({ v: VERSION, dialect: 'responses', anchor: anchorKey(identity), at, items: withheld });
    withheld = [];
  };
  for (const round of rounds) {
    const raws = outputItems(round.turn);
    const output = field(round.turn.json, 'output');
    if (!raws || !Array.isArray(output) || raws.length !== output.length) return null;
    output.forEach((item, k) => {
      if (isExpandItem(item)) return void withheld.push(raws[k] ?? '');
      const identity = itemIdentity(item);
      if (identity === null) return;
      if (withheld.length) flush(anchor === null ? 'before' : 'after', anchor ?? identity);
      anchor = identity;
    });
    withheld.push(...round.results.map(responsesResultItem));
  }
  if (withheld.length) {
    if (anchor === null) return null; // nothing the client saw to hold them
    flush('after', anchor);
  }
  return trails;
}

function parseTrail(text: string): ResponsesTrail | null {
  const t = parseJson(text);
  if (!isObject(t) || t['v'] !== VERSION || t['dialect'] !== 'responses' || !Array.isArray(t['items'])) return null;
  return t as unknown as ResponsesTrail;
}

const inputOf = (view: WireView): unknown[] => (Array.isArray(view.body.input) ? (view.body.input as unknown[]) : []);

/** Content keys to load with the session: one per input item a trail could sit beside. */
export function responsesTrailKeys(view: WireView): string[] {
  return inputOf(view).flatMap((item) => {
    const identity = itemIdentity(item);
    return identity === null ? [] : [anchorKey(identity)];
  });
}

/** One insertion per frozen trail whose anchor item this request carries. */
export function responsesTrailEdits(view: WireView, snapshot: SessionSnapshot): Edit[][] {
  const groups: Edit[][] = [];
  inputOf(view).forEach((item, i) => {
    const identity = itemIdentity(item);
    const stored = identity === null ? undefined : snapshot.frozen.get(frozenSlot(TRAIL_COMPONENT, anchorKey(identity)));
    const trail = stored === undefined ? null : parseTrail(stored);
    const span = view.index.message(i);
    if (!trail || !span || trail.items.length === 0) return;
    const text = trail.items.join(',');
    groups.push([
      trail.at === 'after'
        ? { start: span.end, end: span.end, text: `,${text}` }
        : { start: span.start, end: span.start, text: `${text},` },
    ]);
  });
  return groups;
}
