// cmdfilter: shrinks command output with declarative DSL filters. A tool output is matched on its
// first non-empty line or the command its tool call ran, filtered by the first matching filter,
// and the original is stashed before the text changes; a recovery hint follows the marker only when
// the filter actually lost something. Decisions are a pure function of (output, command, config),
// so the same output always yields the same bytes, and they are frozen for byte-identical replay.
import { Type } from '@sinclair/typebox';
import {
  DslError,
  FilterSet,
  applyFilter,
  builtinDocuments,
  loadFilterDocument,
  outputSelector,
  type FilterResult,
  type ParsedDocument,
} from '@context-guru/dsl';
import {
  defineComponent,
  type Component,
  type ComponentOutcome,
  type Ctx,
  type LedgerEntry,
  type Message,
  type ToolCall,
} from '../component';
import { MarkerModeOption, NonNegInt } from '../shared/common-options';
import { ConfigError } from '../shared/errors';
import { EXPAND_TOOL_NAME, HINT_FULL_OUTPUT, contentKey, withToken } from '../shared/marker';
import { messageText, toolOutputs } from '../shared/message-text';
import { commitOffload, Gates, OffloadTally, rewritableText, settledByReplay, tailAllows } from '../shared/offload';
import { deleteOldest } from '../shared/insertion-order';
import { decodeOptions } from '../shared/options';
import { countTokens } from '../shared/tokens';

const NAME = 'cmdfilter';

const CmdfilterOptions = Type.Object({
  /** Inline filter documents (YAML text, schema_version 1), loaded with no recompile. */
  filters: Type.Array(Type.String(), { default: [] }),
  disable_builtins: Type.Boolean({ default: false }),
  /** Outputs smaller than this many UTF-8 bytes are left alone. */
  min_size: NonNegInt(400),
  marker_mode: MarkerModeOption,
  cold_cache: Type.Boolean({ default: false }),
});

const CMDFILTER_GATES = [
  'non_text_blocks',
  'empty',
  'below_min_size',
  'marker_or_kept_verbatim',
  'cached_prefix',
  'no_filter_match',
  'filter_matched_no_change',
  'marker_no_win',
] as const;

type Options = ReturnType<typeof decodeRaw>;
const decodeRaw = (raw: unknown, path: string) => decodeOptions(CmdfilterOptions, raw, path);

/** Compiled filter sets per distinct options set: compiled at config time, never per request. */
const compiled = new Map<string, FilterSet>();
const COMPILED_MAX = 64;

function filterSetFor(o: Options, path: string): FilterSet {
  const key = JSON.stringify([o.disable_builtins, o.filters]);
  const hit = compiled.get(key);
  if (hit) return hit;
  const docs: ParsedDocument[] = o.disable_builtins ? [] : [...builtinDocuments()];
  const sourceIndex = new Map<string, number>();
  try {
    o.filters.forEach((text, i) => {
      const source = `filters[${i}]`;
      sourceIndex.set(source, i);
      docs.push(loadFilterDocument(text, source));
    });
    const set = new FilterSet(docs);
    if (compiled.size >= COMPILED_MAX) deleteOldest(compiled);
    compiled.set(key, set);
    return set;
  } catch (err) {
    if (!(err instanceof DslError)) throw err;
    const i = sourceIndex.get(err.source);
    const where = [
      err.filter !== undefined ? `filter "${err.filter}"` : '',
      err.field !== undefined ? `field "${err.field}"` : '',
      err.line > 0 ? `line ${err.line}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    throw new ConfigError(
      'invalid_filter',
      i === undefined ? `${path}.filters` : `${path}.filters[${i}]`,
      where ? `${where}: ${err.detail}` : err.detail,
    );
  }
}

function decode(raw: unknown, path: string): Options {
  const o = decodeRaw(raw, path);
  filterSetFor(o, path);
  return o;
}

/**
 * The recovery hint for a filter's loss: none when nothing was lost.
 * @internal exported for tests
 */
export function lossHint(r: Pick<FilterResult, 'loss' | 'keptLines'>): string {
  if (r.loss === 'tail') return ` [truncated after line ${r.keptLines}; rest via ${EXPAND_TOOL_NAME}]`;
  if (r.loss === 'whole') return HINT_FULL_OUTPUT;
  return '';
}

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash']);

/**
 * The command a tool call ran: `arguments.command` when present (argv joined), else the tool name.
 * @internal exported for tests
 */
export function commandOf(call: ToolCall): string {
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    return call.name;
  }
  const cmd = typeof args === 'object' && args !== null ? (args as Record<string, unknown>).command : undefined;
  if (typeof cmd === 'string') return cmd;
  if (Array.isArray(cmd) && cmd.length > 0 && cmd.every((a): a is string => typeof a === 'string')) {
    // ["bash", "-lc", "pytest -q"] ran `pytest -q`.
    const [shell, flag, script] = cmd;
    if (cmd.length === 3 && shell !== undefined && flag !== undefined && script !== undefined) {
      if (SHELLS.has(shell.replace(/^.*\//, '')) && /^-\w*c$/.test(flag)) return script;
    }
    return cmd.join(' ');
  }
  return call.name;
}

function toolCallsById(messages: readonly Message[]): Map<string, ToolCall> {
  const out = new Map<string, ToolCall>();
  for (const m of messages) {
    if (m.role !== 'assistant' || !m.tool_calls) continue;
    for (const call of m.tool_calls) out.set(call.id, call);
  }
  return out;
}

function create(o: Options): Component {
  const set = filterSetFor(o, `components.${NAME}`);
  return {
    name: NAME,
    kind: 'offload',
    run(messages: Message[], ctx: Ctx): ComponentOutcome {
      // Enabled only when at least one filter is loaded.
      if (set.size === 0) return { skipped: true };
      const gates = new Gates();
      const tally = new OffloadTally();
      const ledger: LedgerEntry[] = [];
      const calls = toolCallsById(messages);
      for (const { i, m } of toolOutputs(messages)) {
        const text = rewritableText(m, gates);
        if (text === null) continue;
        if (text.trim() === '') {
          gates.add('empty');
          continue;
        }
        if (Buffer.byteLength(text, 'utf8') < o.min_size) {
          gates.add('below_min_size');
          continue;
        }
        if (settledByReplay(NAME, m, text, ctx, gates, tally, i)) continue;
        const key = contentKey(text);
        // A lost decision may be re-derived at depth: the same content and config give the same bytes.
        if (!tailAllows(i, ctx, o.cold_cache, ctx.state.frozenLost(NAME, key))) {
          gates.add('cached_prefix');
          continue;
        }
        const call = m.tool_call_id !== undefined ? calls.get(m.tool_call_id) : undefined;
        const sel = set.select(text, call ? commandOf(call) : undefined);
        if (!sel) {
          gates.add('no_filter_match');
          ledger.push({ kind: 'selector_miss', selector: outputSelector(text).line, contentKey: key });
          continue;
        }
        const r = applyFilter(sel.filter, text);
        if (r.output === text) {
          gates.add('filter_matched_no_change');
          continue;
        }
        const body = r.output.replace(/\n+$/, '');
        const before = countTokens(text);
        const c = commitOffload(m, text, (token) => withToken(body, token, '\n'), ctx, o.marker_mode, lossHint(r), NAME);
        if (!c.ok) {
          gates.add('marker_no_win');
          continue;
        }
        tally.record(c);
        ledger.push({
          kind: 'filter_act',
          filter: sel.filter.name,
          family: sel.filter.family,
          savedTokens: before - countTokens(messageText(m) ?? ''),
          stashKey: c.id,
        });
      }
      return { keys: tally.keys, irreversible: tally.irreversible, gates: gates.counts, ledger };
    },
  };
}

export const cmdfilterComponent = defineComponent({ name: NAME, kind: 'offload', gates: CMDFILTER_GATES, options: decode, create });
