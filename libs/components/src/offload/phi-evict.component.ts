// phi_evict: when the tool outputs of a transcript exceed budget_tokens, score each by
// Φ = wR·relevance + wH·recency − wC·cost − wD·redundancy and evict the lowest-scoring ones to a
// marker (original stashed) until the transcript fits. The newest tool output is never evicted.
// An eviction is frozen and replayed; its text is a pure function of the content, so a lost
// freeze is re-derived byte-identically even inside the cached prefix.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { HINT_FULL_OUTPUT, contentKey, hasPlaceholder, withToken } from '../shared/marker';
import { keywordOverlap, keywords } from '../shared/keywords';
import { messageText, type ToolOutput, toolOutputs, userTexts } from '../shared/message-text';
import { commitOffload, Gates, OffloadTally, replayFrozen, rewritableText, tailAllows } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { countTokens, messageTokens } from '../shared/tokens';

const NAME = 'phi_evict';

const EVICTED_NOTE = '[evicted to fit context budget]';

/**
 * Weight profiles as docs/components/phi_evict.md gives them: relevance, recency, cost, redundancy.
 * @internal exported for tests
 */
export const WEIGHTS = {
  balanced: { r: 0.4, h: 0.2, c: 0.3, d: 0.1 },
  aggressive: { r: 0.3, h: 0.1, c: 0.45, d: 0.15 },
  conservative: { r: 0.45, h: 0.2, c: 0.05, d: 0.05 },
} as const;

const PhiEvictOptions = Type.Object({
  budget_tokens: NonNegInt(120000),
  weights: Type.Union([Type.Literal('balanced'), Type.Literal('aggressive'), Type.Literal('conservative')], {
    default: 'balanced',
  }),
  marker_mode: MarkerModeOption,
  cold_cache: Type.Boolean({ default: false }),
});

const PHI_EVICT_GATES = [
  'single_tool_output',
  'within_budget',
  'non_text_blocks',
  'marker_or_kept_verbatim',
  'cached_prefix',
  'marker_no_win',
] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(PhiEvictOptions, raw, path);

interface Scored {
  i: number;
  m: Message;
  text: string | null;
  tokens: number;
  phi: number;
}

/** @internal exported for tests */
export function evictedText(token: string): string {
  return withToken(EVICTED_NOTE, token);
}

/**
 * Φ for every tool output (oldest first). Cost counts every output's text, including the text of
 * outputs that also carry images: they occupy the context whether or not they can be evicted.
 * @internal exported for tests
 */
export function scoreOutputs(
  outputs: readonly ToolOutput[],
  query: ReadonlySet<string>,
  w: { r: number; h: number; c: number; d: number },
): Scored[] {
  // Cost is relative to the whole, so every output's tokens are counted before any is scored.
  const measured = outputs.map(({ i, m }) => ({ i, m, text: messageText(m), tokens: messageTokens(m) }));
  const total = measured.reduce((a, x) => a + x.tokens, 0) || 1;
  const n = measured.length;
  const seen = new Set<string>();
  return measured.map(({ i, m, text, tokens }, k) => {
    const redundancy = text !== null && seen.has(text) ? 1 : 0;
    if (text !== null) seen.add(text);
    const relevance = text === null ? 0 : keywordOverlap(text, query);
    const recency = n > 1 ? k / (n - 1) : 1;
    const phi = w.r * relevance + w.h * recency - w.c * (tokens / total) - w.d * redundancy;
    return { i, m, text, tokens, phi };
  });
}

function create(o: Options): Component {
  const w = WEIGHTS[o.weights];
  return {
    name: NAME,
    kind: 'offload',
    run(messages: Message[], ctx: Ctx): ComponentOutcome {
      const gates = new Gates();
      const tally = new OffloadTally();
      const tools = toolOutputs(messages);
      if (tools.length <= 1) {
        for (const _ of tools) gates.add('single_tool_output');
        return { gates: gates.counts };
      }
      const older = tools.slice(0, -1);
      const pending = new Set<number>();
      // Replay first, at any depth: cached bytes must not flip, whatever today's budget says.
      for (const { i, m } of older) {
        const text = rewritableText(m, gates);
        if (text === null) continue;
        const replay = replayFrozen(NAME, m, text, ctx, i);
        if (replay.kind === 'replayed') tally.record(replay);
        else if (replay.kind === 'kept' || hasPlaceholder(text)) gates.add('marker_or_kept_verbatim');
        else if (ctx.state.frozenLost(NAME, contentKey(text))) evict(i, m, text, true);
        else pending.add(i);
      }
      let total = tools.reduce((a, { m }) => a + messageTokens(m), 0);
      if (total <= o.budget_tokens) {
        for (const _ of pending) gates.add('within_budget');
        return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts };
      }
      // Scoring reads every output, so it only runs on a request that is actually over budget.
      const query = keywords(userTexts(messages).at(-1) ?? '');
      // Pending outputs are the text ones (the replay pass skipped the rest).
      const scored = scoreOutputs(tools, query, w)
        .filter((s): s is Scored & { text: string } => s.text !== null && pending.has(s.i))
        .sort((a, b) => a.phi - b.phi || a.i - b.i);
      for (const s of scored) {
        if (total <= o.budget_tokens) {
          gates.add('within_budget');
          continue;
        }
        total -= evict(s.i, s.m, s.text, false);
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts };

      /** Tokens saved by evicting message i (0 when a gate declined). */
      function evict(i: number, m: Message, text: string, lost: boolean): number {
        if (!tailAllows(i, ctx, o.cold_cache, lost)) {
          gates.add('cached_prefix');
          return 0;
        }
        const before = countTokens(text);
        const r = commitOffload(m, text, evictedText, ctx, o.marker_mode, HINT_FULL_OUTPUT, NAME);
        if (!r.ok) {
          gates.add('marker_no_win');
          return 0;
        }
        tally.record(r);
        return before - countTokens(messageText(m) ?? '');
      }
    },
  };
}

export const phiEvictComponent = defineComponent({
  name: NAME,
  kind: 'offload',
  gates: PHI_EVICT_GATES,
  options: decode,
  create,
});
