// skeleton: fenced code blocks in tool outputs keep their shape (imports, types, signatures, class
// bodies, comments) while function bodies of ≥ min_tokens become placeholders; the whole original
// message is stashed behind one marker. A block is changed only if it reparses cleanly.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { HINT_FULL_SOURCE, withToken } from '../shared/marker';
import { messageText, toolOutputs } from '../shared/message-text';
import { Gates, OffloadTally, commitOffload, markedOrKept } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { itemAt, present } from '../shared/present';
import { textMemo } from '../shared/text-memo';
import { type ElideGate, type ElideResult, skeletonizeCode } from './skeleton/elide';
import { findFencedBlocks, type FencedBlock } from './skeleton/fences';
import { type GrammarId, loadedParser, parserFor } from './skeleton/grammars';
import { LANGUAGES, grammarsForTag } from './skeleton/languages';

const NAME = 'skeleton';

const SkeletonOptions = Type.Object({
  min_tokens: NonNegInt(80),
  marker_mode: MarkerModeOption,
  // Accepted for config compatibility with the upstream option set. skeleton is not tail-gated
  // (see run()), so there is no cached-prefix gate for a cold cache to lift: it has no effect.
  cold_cache: Type.Boolean({ default: false }),
});

const SKELETON_GATES = [
  'non_text_blocks',
  'marker_or_kept_verbatim',
  'no_fenced_code',
  'unknown_language',
  'source_parse_failed',
  'no_body_over_min_tokens',
  'reparse_failed',
  'marker_no_win',
] as const;

type BlockGate = 'unknown_language' | ElideGate;

// When no block of a message could be skeletonized, the message is counted under the gate of the
// block that got furthest, so the histogram names the most specific reason.
const PROGRESS: readonly BlockGate[] = ['unknown_language', 'source_parse_failed', 'no_body_over_min_tokens', 'reparse_failed'];

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(SkeletonOptions, raw, path);

interface Candidate {
  message: Message;
  text: string;
  blocks: FencedBlock[];
}

/** Skeleton text + trailing token on its own line (no token in marker_mode off). */
function skeletonText(skeleton: string, token: string): string {
  return withToken(skeleton, token, '\n');
}

function create(o: Options): Component {
  return {
    name: NAME,
    kind: 'offload',
    async run(messages: Message[], ctx: Ctx): Promise<ComponentOutcome> {
      const gates = new Gates();
      const tally = new OffloadTally();
      const candidates = collect(messages, ctx, gates);
      // The only await: grammars load once per process (memoised), so later runs resolve at once.
      await loadGrammars(candidates);
      // Not tail-gated and not frozen: a skeleton is a deterministic function of (content, config,
      // pinned grammar), so a message rewritten when it first arrives in the tail is rewritten to the
      // same bytes on every later turn — the cached prefix never changes. Replaying a frozen copy
      // would add nothing; gating on the tail would only leave deep code unskeletonized forever.
      for (const c of candidates) {
        let skeleton = '';
        let at = 0;
        let changed = 0;
        // How far the furthest-reaching block got (a gate outside PROGRESS counts as its first).
        let furthest = 0;
        for (const b of c.blocks) {
          const r = skeletonizeBlock(c.text.slice(b.start, b.end), b.tag, o.min_tokens);
          if (r.ok) {
            skeleton += c.text.slice(at, b.start) + r.code;
            at = b.end;
            changed += 1;
          } else {
            furthest = Math.max(furthest, PROGRESS.indexOf(r.gate));
          }
        }
        if (changed === 0) {
          gates.add(itemAt(PROGRESS, furthest, 'skeleton progress gate'));
          continue;
        }
        skeleton += c.text.slice(at);
        const r = commitOffload(c.message, c.text, (token) => skeletonText(skeleton, token), ctx, o.marker_mode, HINT_FULL_SOURCE);
        if (r.ok) tally.record(r);
        else gates.add('marker_no_win');
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts };
    },
  };
}

/** Tool outputs worth parsing; every other tool output is counted under its gate here. */
function collect(messages: Message[], ctx: Ctx, gates: Gates): Candidate[] {
  const out: Candidate[] = [];
  for (const { i: index, m: message } of toolOutputs(messages)) {
    const text = messageText(message);
    if (text === null) {
      gates.add('non_text_blocks');
      continue;
    }
    // Content the model expanded stays verbatim (no expand bounce); a marker means already reduced.
    if (markedOrKept(text, ctx, index)) {
      gates.add('marker_or_kept_verbatim');
      continue;
    }
    const blocks = text.includes('```') || text.includes('~~~') ? findFencedBlocks(text) : [];
    if (blocks.length === 0) {
      gates.add('no_fenced_code');
      continue;
    }
    out.push({ message, text, blocks });
  }
  return out;
}

async function loadGrammars(candidates: readonly Candidate[]): Promise<void> {
  const ids = new Set<GrammarId>();
  for (const c of candidates) for (const b of c.blocks) for (const id of grammarsForTag(b.tag) ?? []) ids.add(id);
  await Promise.all([...ids].map((id) => parserFor(id)));
}

function skeletonizeBlock(code: string, tag: string, minTokens: number): ElideResult | { ok: false; gate: 'unknown_language' } {
  const ids = grammarsForTag(tag);
  if (!ids) return { ok: false, gate: 'unknown_language' };
  return blockMemo(`${ids.join(',')}\n${minTokens}\n${code}`);
}

// Every turn re-sends the whole transcript; a block's result is a pure function of (grammars,
// min_tokens, code), so each distinct block is parsed once per process, not once per turn.
const blockMemo = textMemo(skeletonizeKeyed, 32 * 1024 * 1024);

function skeletonizeKeyed(key: string): ElideResult {
  const a = key.indexOf('\n');
  const b = key.indexOf('\n', a + 1);
  const ids = key.slice(0, a).split(',') as GrammarId[];
  const minTokens = Number(key.slice(a + 1, b));
  const code = key.slice(b + 1);
  let last: ElideResult = { ok: false, gate: 'source_parse_failed' };
  // An ambiguous tag (`h`) tries its grammars in order; the first that parses the source decides.
  for (const id of ids) {
    last = skeletonizeCode(present(loadedParser(id), `grammar ${id}, loaded before the run`), LANGUAGES[id], code, minTokens);
    if (last.ok || last.gate !== 'source_parse_failed') break;
  }
  return last;
}

export const skeletonComponent = defineComponent({
  name: NAME,
  kind: 'offload',
  gates: SKELETON_GATES,
  options: decode,
  create,
});
