// failed_run: in a fix → re-run loop only the newest test/build run matters. Every earlier run
// that showed a failure becomes a pointer + marker (original stashed); the newest run is always
// kept in full. Decisions are frozen and replayed so a collapsed run never flips back in the cache.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type Ctx, type Message } from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { HINT_FULL_OUTPUT, contentKey, hasPlaceholder, withToken } from '../shared/marker';
import { messageText, toolOutputs } from '../shared/message-text';
import { Gates, OffloadTally, commitOffload, replayFrozen, tailAllows } from '../shared/offload';
import { decodeOptions } from '../shared/options';
import { textMemo } from '../shared/text-memo';
import { countTokens } from '../shared/tokens';

const NAME = 'failed_run';

const SUPERSEDED_NOTE = '[superseded by a later run]';

const FailedRunOptions = Type.Object({
  min_tokens: NonNegInt(100),
  marker_mode: MarkerModeOption,
  cold_cache: Type.Boolean({ default: false }),
});

const FAILED_RUN_GATES = [
  'non_text_blocks',
  'marker_present',
  'below_min_tokens',
  'not_run_like',
  'fewer_than_two_runs',
  'kept_verbatim_after_expand',
  'earlier_run_passed',
  'cached_prefix',
  'marker_no_win',
] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(FailedRunOptions, raw, path);

/** Output that looks like a test or build run: a result tally or a runner's banner line. */
const RUN_LIKE: readonly RegExp[] = [
  /\d+ (passed|failed|error)/im,
  /^[ \t]*BUILD (SUCCESS|FAIL)/im,
  /^[ \t]*=+ (FAILURES|test session)/im,
  /^[ \t]*Traceback \(most recent/im,
  /^[ \t]*FAILED\b/im,
  /^[ \t]*panic:/im,
  /^[ \t]*npm ERR!/im,
];

/** A run that shows a failure (a passing earlier run is not "superseded by a fix"). */
const FAILURE_BEARING: readonly RegExp[] = [
  /[1-9]\d* (failed|error|errors|errored)\b/i,
  /\bexit(ed with)? (code )?[1-9]/i,
  /^[ \t]*(build fail|=+ failures|traceback \(most recent|panic:|npm err!)/im,
  // Case-sensitive: pytest's "FAILED tests/…" summary, not the word "failed" in prose.
  /^[ \t]*FAILED\b/m,
];

/** @internal exported for tests */
export const isRunLike = (text: string): boolean => RUN_LIKE.some((re) => re.test(text));
/** @internal exported for tests */
export const isFailureBearing = (text: string): boolean => FAILURE_BEARING.some((re) => re.test(text));

// The same outputs come back every turn: scan each text once.
const runLikeMemo = textMemo(isRunLike, 16 * 1024 * 1024);

/** @internal exported for tests */
export function supersededText(token: string): string {
  return withToken(SUPERSEDED_NOTE, token);
}

function create(o: Options): Component {
  return {
    name: NAME,
    kind: 'offload',
    run(messages: Message[], ctx: Ctx): ComponentOutcome {
      const gates = new Gates();
      const tally = new OffloadTally();
      const outputs = toolOutputs(messages).map(({ i, m }) => ({ i, m, text: messageText(m) }));
      const isRun = (text: string) => !hasPlaceholder(text) && countTokens(text) >= o.min_tokens && runLikeMemo(text);
      const runs = outputs.filter((x) => x.text !== null && isRun(x.text)).map((x) => x.i);
      const newest = runs[runs.length - 1];
      for (const { i, m, text } of outputs) {
        if (text === null) {
          gates.add('non_text_blocks');
          continue;
        }
        // The newest run is kept in full, so it never replays an earlier decision — even one
        // frozen for byte-identical content produced by an earlier run.
        if (i !== newest) {
          const replay = replayFrozen(NAME, m, text, ctx, i);
          if (replay.kind === 'replayed') {
            tally.record(replay);
            continue;
          }
          if (replay.kind === 'kept') {
            gates.add('kept_verbatim_after_expand');
            continue;
          }
        }
        if (hasPlaceholder(text)) gates.add('marker_present');
        else if (countTokens(text) < o.min_tokens) gates.add('below_min_tokens');
        else if (!runLikeMemo(text)) gates.add('not_run_like');
        else if (runs.length < 2) gates.add('fewer_than_two_runs');
        else if (i !== newest) supersede(i, m, text);
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts };

      function supersede(i: number, m: Message, text: string): void {
        if (!isFailureBearing(text)) {
          gates.add('earlier_run_passed');
          return;
        }
        // The collapsed text is a pure function of the content, so a lost freeze is re-derived
        // at depth byte-identically instead of flipping the cached collapse back to the original.
        const lost = ctx.state.frozenLost(NAME, contentKey(text));
        if (!tailAllows(i, ctx, o.cold_cache, lost, m)) {
          gates.add('cached_prefix');
          return;
        }
        const r = commitOffload(m, text, supersededText, ctx, o.marker_mode, HINT_FULL_OUTPUT, NAME);
        if (r.ok) tally.record(r);
        else gates.add('marker_no_win');
      }
    },
  };
}

export const failedRunComponent = defineComponent({
  name: NAME,
  kind: 'offload',
  gates: FAILED_RUN_GATES,
  options: decode,
  create,
});
