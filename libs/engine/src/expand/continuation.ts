// Builds the next upstream request of the expand loop: the previous request's raw bytes with the
// model's turn and one tool result per expand call (in call order) appended to `messages`.
import type { Dialect, ExpandHooks, ExpandLimits, ExpandResult, ModelTurn } from './expand.types';
import { field } from './json-shape';
import { appendToArray, locate, type PathStep } from './raw-json';
import { buildResponsesContinuation } from './responses-expand';
import { buildGeminiContinuation } from './gemini-expand';
import type { ExpandCall } from './expand.types';

const HASH_RE = /^[A-Za-z0-9_-]{1,64}$/;

export const DEFAULT_EXPAND_LIMITS: ExpandLimits = { callsPerRound: 16, bytesPerAnswer: 4 * 1024 * 1024 };

/**
 * What one answer has spent of its limits, across its rounds: a model that asks for one id 200
 * times, or for 1,000 ids, would otherwise make the gateway send a continuation of all of them
 * (24.8 MB for a 268-byte request), and a trail that carries them into every later turn.
 */
export class ExpandBudget {
  private bytes = 0;
  /** id → the call whose result carries that original already. */
  private readonly given = new Map<string, string>();

  constructor(readonly limits: ExpandLimits = DEFAULT_EXPAND_LIMITS) {}

  /** The call that already carries `id`'s original in this answer, if one does. */
  givenIn(id: string): string | undefined {
    return this.given.get(id);
  }

  /** Takes `original` for `callId` when it fits what is left; false when it does not. */
  spend(id: string, callId: string, original: string): boolean {
    const size = Buffer.byteLength(original);
    if (this.bytes + size > this.limits.bytesPerAnswer) return false;
    this.bytes += size;
    this.given.set(id, callId);
    return true;
  }
}

/** @internal exported for tests */
export function unavailableText(id: string): string {
  return `[expand: original for id ${id} is no longer available]`;
}

const givenText = (id: string, callId: string) => `[expand: the original for id ${id} is in the result of call ${callId}]`;
const cappedText = (n: number) =>
  `[expand: not expanded: at most ${n} expand calls are answered per round; ask again for what you still need]`;
const overBudgetText = (n: number) => `[expand: not expanded: the originals expanded for this answer reached the ${n} byte limit]`;

type Plan = { look: true } | { look: false; text: string };

/**
 * One result per call, in call order: the providers need an answer for every call id. An id is
 * expanded once per answer, only the first `callsPerRound` calls of a round are looked up, and an
 * original that would take the answer past its byte budget is not added. A lookup that throws
 * counts as unavailable: a store hiccup must not fail the request.
 */
export async function resolveCalls(calls: readonly ExpandCall[], hooks: ExpandHooks, budget = new ExpandBudget()): Promise<ExpandResult[]> {
  const first = new Map<string, string>();
  const plans = calls.map((c, i): Plan => {
    if (i >= budget.limits.callsPerRound) return { look: false, text: cappedText(budget.limits.callsPerRound) };
    if (!HASH_RE.test(c.id)) return { look: false, text: unavailableText(c.id) };
    const earlier = budget.givenIn(c.id) ?? first.get(c.id);
    if (earlier !== undefined) return { look: false, text: givenText(c.id, earlier) };
    first.set(c.id, c.callId);
    return { look: true };
  });
  const originals = await Promise.all(
    calls.map(async (c, i) => {
      if (!plans[i]?.look) return null;
      try {
        return await hooks.resolve(c.id);
      } catch {
        return null;
      }
    }),
  );
  return calls.map((c, i) => {
    const plan = plans[i];
    if (plan && !plan.look) return { callId: c.callId, id: c.id, text: plan.text, resolved: false };
    const original = originals[i];
    if (typeof original !== 'string') return { callId: c.callId, id: c.id, text: unavailableText(c.id), resolved: false };
    if (!budget.spend(c.id, c.callId, original))
      return { callId: c.callId, id: c.id, text: overBudgetText(budget.limits.bytesPerAnswer), resolved: false };
    try {
      hooks.onResolved(c.id, original);
    } catch {
      // Bookkeeping (kept-verbatim, bounce stats) must never cost the client its answer.
    }
    return { callId: c.callId, id: c.id, text: original, resolved: true };
  });
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
  if (dialect === 'gemini') return buildGeminiContinuation(requestRaw, turn, results);
  const items = continuationItems(dialect, turn, results);
  return items ? appendToArray(requestRaw, ['messages'], items) : null;
}
