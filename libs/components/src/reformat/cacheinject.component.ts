// cacheinject: one Anthropic cache breakpoint on the last block (a tool_use included) of the message that closes the
// stable prefix (the one just before the newest turn), so the next turn reads that prefix from the
// provider cache. It only ever adds a `cache_control` key to a block object — never text — and
// never lets the request carry more than the provider's four breakpoints.
import { Type } from '@sinclair/typebox';
import { defineComponent, type Component, type ComponentOutcome, type ContentBlock, type Ctx, type Message } from '../component';
import { decodeOptions } from '../shared/options';
import { itemAt, present } from '../shared/present';

const NAME = 'cacheinject';

/** The provider rejects a request with more breakpoints than this (system + tools + messages). */
export const MAX_BREAKPOINTS = 4;

const CacheinjectOptions = Type.Object({
  ttl: Type.Union([Type.Literal('5m'), Type.Literal('1h')], { default: '5m' }),
  // Says where the prefix boundary's breakpoint is, so the gateway may withdraw the client's
  // breakpoints on a newest turn that mask offloads once read (read_min_tokens): the provider would
  // write those outputs to its cache at 1.25× only for the next turn to replace them.
  withdraw_read_once: Type.Boolean({ default: false }),
});

const CACHEINJECT_GATES = ['not_cache_aware_provider', 'no_block_content', 'breakpoint_present', 'breakpoint_budget_exhausted'] as const;

type Options = ReturnType<typeof decode>;
const decode = (raw: unknown, path: string) => decodeOptions(CacheinjectOptions, raw, path);

function isBreakpoint(v: unknown): boolean {
  return typeof v === 'object' && v !== null;
}

function blockHasBreakpoint(b: ContentBlock): boolean {
  const rec = b as Record<string, unknown>;
  return isBreakpoint(rec['cache_control']) || isBreakpoint(rec['cachePoint']);
}

/**
 * Breakpoints the normalized messages already carry: on content blocks and on tool_use calls.
 * @internal exported for tests
 */
export function visibleBreakpoints(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) {
    for (const c of m.tool_calls ?? []) if (isBreakpoint(c.cache_control)) n++;
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) if (blockHasBreakpoint(b)) n++;
  }
  return n;
}

/**
 * Whether the provider accepts a breakpoint on this block: it rejects one on a thinking block or
 * on an empty text block.
 */
function cacheable(b: ContentBlock): boolean {
  if (b.type === 'thinking' || b.type === 'redacted_thinking') return false;
  return !(b.type === 'text' && typeof b.text === 'string' && b.text.length === 0);
}

/**
 * Where the breakpoint goes: message `msg`, on its last tool call (`call`) or its last block.
 * @internal exported for tests
 */
export interface Boundary {
  msg: number;
  call: boolean;
}

/**
 * The last content block of the message closing the stable prefix: the last assistant message,
 * i.e. the one just before the newest turn (the trailing run of tool results and user text after
 * it). An Anthropic assistant message's tool_use blocks come last on the wire and are normalized
 * into tool_calls, so when it has calls the block is its last call — the common agent turn holds
 * nothing else. A message whose last block cannot carry a breakpoint (string content) hands over
 * to the nearest earlier one that can. Synthetic tool messages are skipped: their blocks do not
 * exist on the wire. null when there is no such message.
 * @internal exported for tests
 */
export function prefixBoundary(messages: readonly Message[], provider: Ctx['provider'] = 'anthropic'): Boundary | null {
  for (let i = messages.findLastIndex((m) => m.role === 'assistant'); i >= 0; i--) {
    const m = messages[i];
    if (m === undefined || m.role === 'tool') continue;
    const last = Array.isArray(m.content) ? m.content[m.content.length - 1] : undefined;
    // Content that still carries its tool_use blocks (not wire-normalized) ends with one itself.
    if (last?.type === 'tool_use') return { msg: i, call: false };
    if (provider === 'anthropic' && m.role === 'assistant' && m.tool_calls?.length) return { msg: i, call: true };
    if (last && cacheable(last)) return { msg: i, call: false };
  }
  return null;
}

function hasBreakpoint(m: Message): boolean {
  return (
    (Array.isArray(m.content) && m.content.some(blockHasBreakpoint)) || (m.tool_calls ?? []).some((c) => isBreakpoint(c.cache_control))
  );
}

function create(o: Options): Component {
  const control: Record<string, unknown> = o.ttl === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
  return {
    name: NAME,
    kind: 'reformat',
    run(messages: Message[], ctx: Ctx): ComponentOutcome {
      const gate = (name: (typeof CACHEINJECT_GATES)[number]): ComponentOutcome => ({ gates: { [name]: 1 } });
      if (ctx.provider !== 'anthropic') return gate('not_cache_aware_provider');
      const at = prefixBoundary(messages, ctx.provider);
      if (!at) return gate('no_block_content');
      const m = itemAt(messages, at.msg, 'prefix boundary message');
      // The newest turn's breakpoints may go only while the boundary keeps one (present or placed here).
      const placed = (outcome: ComponentOutcome): ComponentOutcome =>
        o.withdraw_read_once && hasBreakpoint(m) ? { ...outcome, anchor: at.msg } : outcome;
      if (hasBreakpoint(m)) return placed(gate('breakpoint_present'));
      // Both counts are charged even though the inbound count may already include the visible
      // ones: double-counting can only cost a breakpoint we could have placed, while counting
      // too few would send a fifth breakpoint and get the request rejected.
      const used = ctx.existingBreakpoints + visibleBreakpoints(messages);
      if (MAX_BREAKPOINTS - used <= 0) return gate('breakpoint_budget_exhausted');
      // A fresh block (or call) object: the key is added, nothing else about it changes.
      if (at.call) {
        // A new array: the calls array is shared with the pipeline's snapshot (cloneMessage).
        const calls = present(m.tool_calls, 'boundary tool calls');
        const last = calls.length - 1;
        m.tool_calls = [...calls.slice(0, last), { ...itemAt(calls, last, 'boundary tool call'), cache_control: { ...control } }];
      } else {
        const blocks = m.content as ContentBlock[];
        const last = blocks.length - 1;
        blocks[last] = { ...itemAt(blocks, last, 'boundary block'), cache_control: { ...control } };
      }
      return placed({ gates: {} });
    },
  };
}

export const cacheinjectComponent = defineComponent({
  name: NAME,
  kind: 'reformat',
  gates: CACHEINJECT_GATES,
  options: decode,
  create,
});
