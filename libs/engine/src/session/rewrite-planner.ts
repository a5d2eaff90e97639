// Priced rewrites inside the provider's cached prefix. Components may propose a new decision at
// depth (mask's age, failed_run's supersession) when the gateway prices them; this planner then
// keeps only the cut that pays. A change at message m makes the provider re-bill everything from
// its re-billing start b (OpenAI: m itself, prefix caching; Anthropic: the entry anchored before
// m) to the end of the cached prefix as a cache write (or uncached input) instead of a read, once;
// every later turn then reads fewer tokens. One cut pays one suffix for every proposal after it.
import { cloneMessage, countTokens, messageTokens, sameMessage, type Dialect, type Message } from '@context-guru/components';

/** Per-token rates relative to the uncached input price. */
export interface RewriteRates {
  /** What a re-billed cached token costs now: Anthropic's cache write, OpenAI's uncached input. */
  write: number;
  /** What a cached token costs on a read. */
  read: number;
}

interface RewritePolicy {
  /** A cut is made only when its cost is paid back within this many later turns (0: never). */
  paybackTurns: number;
}

export interface PlanInput {
  dialect: Dialect;
  /** The client's messages and the pipeline's output (changed in place: rejected proposals revert). */
  input: readonly Message[];
  output: Message[];
  /** New decisions inside the cached prefix: index → the message as the provider holds it. */
  proposals: ReadonlyMap<number, Message>;
  /** Index of the last message the provider holds (maxCachedIdx). */
  cachedIdx: number;
  rates: RewriteRates;
  policy: RewritePolicy;
  /** The pipeline places cacheinject's breakpoint on the last assistant message of every request. */
  anchored: boolean;
}

interface PlannedRewrite {
  /** Normalized index of the first changed message. */
  from: number;
  /** Normalized index the provider re-bills from. */
  rebillFrom: number;
  /** Cost of the cut in uncached-input-token equivalents (negative: it pays on this turn). */
  costTokens: number;
  /** Content tokens every later turn no longer reads. */
  removedTokens: number;
  /** Saving per later turn, in uncached-input-token equivalents. */
  savingPerTurn: number;
  /** Turns after which the cut has paid for itself (0 when it pays at once). */
  paybackTurns: number;
}

export interface PlanResult {
  plan: PlannedRewrite | null;
  /** Proposals put back as the client sent them (below the cut, or no cut paid). */
  reverted: number[];
}

/** Tokens the provider bills for a message: its text, its tool calls' arguments, a small envelope. */
const ENVELOPE_TOKENS = 8;
function pricedTokens(m: Message | undefined): number {
  if (!m) return 0;
  let n = messageTokens(m) + ENVELOPE_TOKENS;
  for (const c of m.tool_calls ?? []) n += countTokens(c.arguments) + countTokens(c.name);
  return n;
}

/**
 * Where the provider starts re-billing for a change at m. Anthropic reads the longest live entry
 * before the change: cacheinject anchors one on the last assistant message of every request, so
 * the previous request's (the last assistant at or before the cached boundary) was written or read
 * one turn ago; a change after it re-bills from the message after it (from the anchor itself when
 * the pipeline has no cacheinject: the client's breakpoint on its newest block sits just before).
 * Any deeper change is priced from the first message (no entry the gateway can vouch for), which
 * keeps deep rewrites from ever looking cheap.
 * @internal exported for tests
 */
export function rebillStart(dialect: Dialect, messages: readonly Message[], m: number, cachedIdx: number, anchored: boolean): number {
  // OpenAI Chat and Responses (and compatible providers) cache prefixes: the change itself.
  if (dialect !== 'anthropic') return m;
  let anchor = -1;
  for (let i = Math.min(cachedIdx, messages.length - 1); i >= 0; i--) {
    if (messages[i]?.role === 'assistant') {
      anchor = i;
      break;
    }
  }
  if (anchor < 0 || m <= anchor) return 0;
  // Without cacheinject the entry is the client's own end-of-request one, just before the anchor.
  return anchored ? anchor + 1 : anchor;
}

/** The horizon a cut is judged over is capped at this many payback windows. */
const HORIZON_PAYBACKS = 4;

/**
 * A conservative guess of the turns still to come: half the answers seen so far (docs/cache.md).
 * @internal exported for tests
 */
export function remainingTurns(messages: readonly Message[]): number {
  let answered = 0;
  for (const m of messages) if (m.role === 'assistant') answered++;
  return Math.floor(answered / 2);
}

export function planRewrite(p: PlanInput): PlanResult {
  const changed = [...p.proposals]
    .filter(([i, held]) => i <= p.cachedIdx && !sameMessage(held, p.output[i]))
    .map(([i]) => i)
    .sort((a, b) => a - b);
  const revertAll = (): PlanResult => ({ plan: null, reverted: revert(p, changed) });
  if (changed.length === 0) return { plan: null, reverted: [] };
  if (p.policy.paybackTurns <= 0) return revertAll();
  const horizon = Math.min(remainingTurns(p.input), p.policy.paybackTurns * HORIZON_PAYBACKS);
  const heldAt = (i: number): Message | undefined => p.proposals.get(i) ?? p.output[i];
  const removal = new Map(changed.map((i) => [i, pricedTokens(heldAt(i)) - pricedTokens(p.output[i])]));
  let removable = 0;
  for (const r of removal.values()) removable += Math.max(0, r);
  const { write, read } = p.rates;
  // What the provider holds from i to the cached boundary, walked down from the boundary only as
  // far as a cut could still pay: past that, the held suffix alone costs more than the most any
  // cut could save within the payback window, and the walk is bounded by the removable content.
  const last = Math.min(p.cachedIdx, p.output.length - 1);
  const heldFrom = new Map<number, number>();
  let held = 0;
  for (let i = last; i >= 0; i--) {
    held += pricedTokens(heldAt(i));
    heldFrom.set(i, held);
    if (held * (write - read) - removable * write > p.policy.paybackTurns * removable * read) break;
  }
  let best: PlannedRewrite | null = null;
  let bestNet = 0;
  let removed = 0;
  for (let c = changed.length - 1; c >= 0; c--) {
    const m = changed[c] as number;
    removed += removal.get(m) ?? 0;
    const b = rebillStart(p.dialect, p.input, m, p.cachedIdx, p.anchored);
    const h = heldFrom.get(b);
    if (h === undefined || removed <= 0) continue;
    // Below the cut every proposal is reverted, so what is sent from b is what is held less the removal.
    const cost = (h - removed) * write - h * read;
    const saving = removed * read;
    const payback = Math.max(0, cost / saving);
    const net = horizon * saving - cost;
    if (payback <= p.policy.paybackTurns && payback <= horizon && net > bestNet) {
      bestNet = net;
      best = { from: m, rebillFrom: b, costTokens: cost, removedTokens: removed, savingPerTurn: saving, paybackTurns: payback };
    }
  }
  if (!best) return revertAll();
  const cut = best.from;
  return {
    plan: best,
    reverted: revert(
      p,
      changed.filter((i) => i < cut),
    ),
  };
}

function revert(p: PlanInput, indices: readonly number[]): number[] {
  for (const i of indices) {
    const held = p.proposals.get(i);
    if (held) p.output[i] = cloneMessage(held);
  }
  return [...indices];
}
