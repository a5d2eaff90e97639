// Builds the next upstream request of the expand loop: the previous request's raw bytes with the
// model's turn and one tool result per expand call (in call order) appended to `messages`.
import type { ExpandCall } from './expand-calls';
import type { Dialect, ExpandHooks } from './expand.types';
import { field } from './json-shape';
import { appendToArray, locate, type PathStep } from './raw-json';
import { buildResponsesContinuation } from './responses-expand';

const HASH_RE = /^[A-Za-z0-9_-]{1,64}$/;

export interface ExpandResult {
  callId: string;
  id: string;
  text: string;
  resolved: boolean;
}

/** @internal exported for tests */
export function unavailableText(id: string): string {
  return `[expand: original for id ${id} is no longer available]`;
}

/**
 * One result per call, in call order. A lookup that throws counts as unavailable: the provider
 * still needs an answer for every call id, and a store hiccup must not fail the request.
 */
export async function resolveCalls(calls: readonly ExpandCall[], hooks: ExpandHooks): Promise<ExpandResult[]> {
  const originals = await Promise.all(
    calls.map(async (c) => {
      if (!HASH_RE.test(c.id)) return null;
      try {
        return await hooks.resolve(c.id);
      } catch {
        return null;
      }
    }),
  );
  return calls.map((c, i) => {
    const original = originals[i];
    if (typeof original !== 'string') return { callId: c.callId, id: c.id, text: unavailableText(c.id), resolved: false };
    try {
      hooks.onResolved(c.id, original);
    } catch {
      // Bookkeeping (kept-verbatim, bounce stats) must never cost the client its answer.
    }
    return { callId: c.callId, id: c.id, text: original, resolved: true };
  });
}

/** The model's response: parsed, plus its raw text when it arrived as JSON (kept verbatim then). */
export interface ModelTurn {
  json: unknown;
  raw?: string;
}

/** The response value at `path`, as raw bytes when available, else re-serialised from the parse. */
function turnValue(turn: ModelTurn, path: readonly PathStep[]): string | null {
  if (turn.raw !== undefined) {
    const span = locate(turn.raw, path);
    if (span) return turn.raw.slice(span.start, span.end);
  }
  let v: unknown = turn.json;
  for (const step of path) v = Array.isArray(v) && typeof step === 'number' ? v[step] : field(v, String(step));
  return v === undefined ? null : JSON.stringify(v);
}

/**
 * The messages a continuation appends, serialised: the model's turn, then one tool result per
 * call in call order (Anthropic: one user message of tool_result blocks; OpenAI: one tool message
 * each). The expand trail re-inserts these very strings on later turns (trail.ts), so the provider
 * is shown the same bytes again. Null when the turn is not the shape expected.
 */
export function continuationItems(dialect: Dialect, turn: ModelTurn, results: readonly ExpandResult[]): string[] | null {
  if (results.length === 0) return null;
  if (dialect === 'anthropic') {
    const content = turnValue(turn, ['content']);
    if (!content || !content.startsWith('[')) return null;
    return [`{"role":"assistant","content":${content}}`, `{"role":"user","content":[${results.map(resultItem('anthropic')).join(',')}]}`];
  }
  const message = turnValue(turn, ['choices', 0, 'message']);
  if (!message || !message.startsWith('{')) return null;
  return [message, ...results.map(resultItem('openai'))];
}

/** One call's answer: an Anthropic tool_result block or an OpenAI tool message. */
export function resultItem(dialect: Dialect): (r: Pick<ExpandResult, 'callId' | 'text'>) => string {
  return dialect === 'anthropic'
    ? (r) => JSON.stringify({ type: 'tool_result', tool_use_id: r.callId, content: r.text })
    : (r) => JSON.stringify({ role: 'tool', tool_call_id: r.callId, content: r.text });
}

export function buildContinuation(dialect: Dialect, requestRaw: string, turn: ModelTurn, results: readonly ExpandResult[]): string | null {
  if (dialect === 'responses') return buildResponsesContinuation(requestRaw, turn, results);
  const items = continuationItems(dialect, turn, results);
  return items ? appendToArray(requestRaw, ['messages'], items) : null;
}
