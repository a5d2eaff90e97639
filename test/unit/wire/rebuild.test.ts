// The count-changing write-back: a contiguous run of whole body messages is replaced by a new
// text-only message; every surviving message keeps its received bytes, the provider would accept
// the result, and anything else is declined (the received body is forwarded).
import type { Message } from '@context-guru/components';
import type { Dialect } from '../../../libs/engine/src/wire/wire.types';
import { expandToolJson } from '../../../libs/engine/src/wire/expand-tool';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { ANTHROPIC_HOSTILE, OPENAI_HOSTILE, PYTEST_FAIL } from './bodies.fixture';
import { flatten, mulberry32 } from '../../support/random-bodies';
import { randomConversation, slotToolOutput } from '../../support/random-conversations';

const NO_INJECT = { injectExpand: false };
const SUMMARY =
  '=== History Summary ===\n<summary>\nRan pytest: test_discount_applied fails (1200 != 1080).\n</summary> <<cg:0123456789abcdef>>';

function replaced(messages: readonly Message[], start: number, end: number, text = SUMMARY): Message[] {
  return [
    ...messages.slice(0, start).map((m) => structuredClone(m)),
    { role: 'user', content: text },
    ...messages.slice(end).map((m) => structuredClone(m)),
  ];
}

function bodyMessages(raw: string): Array<Record<string, unknown>> {
  return (JSON.parse(raw) as { messages: Array<Record<string, unknown>> }).messages;
}

describe('rebuild (OpenAI)', () => {
  it('keeps every surviving message byte-identical and writes only the summary fresh', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const res = encodeRequest(view, replaced(view.messages, 2, 4), NO_INJECT);
    expect(res).toMatchObject({ changed: true, discarded: [] });
    const span = (i: number) => OPENAI_HOSTILE.slice(view.index.message(i)!.start, view.index.message(i)!.end);
    // Everything outside `messages` is untouched, byte for byte.
    const ms = view.index.topLevel('messages')!;
    expect(res.raw.startsWith(OPENAI_HOSTILE.slice(0, ms.start))).toBe(true);
    expect(res.raw.endsWith(OPENAI_HOSTILE.slice(ms.end))).toBe(true);
    expect(res.raw.slice(ms.start)).toMatch(/^\[/);
    const inner = `[${span(0)},${span(1)},${JSON.stringify({ role: 'user', content: SUMMARY })},${span(4)},${span(5)}]`;
    expect(res.raw).toBe(OPENAI_HOSTILE.slice(0, ms.start) + inner + OPENAI_HOSTILE.slice(ms.end));
    expect(validateProviderShape('openai', JSON.parse(res.raw))).toEqual([]);
  });

  it('still injects the expand tool on a rebuilt body', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const res = encodeRequest(view, replaced(view.messages, 2, 4), { injectExpand: true });
    expect(res.injected).toBe(true);
    expect(res.raw).toContain(expandToolJson('openai'));
    expect(validateProviderShape('openai', JSON.parse(res.raw))).toEqual([]);
  });

  it('applies a content edit on a kept tool output in the same rebuild', () => {
    const raw =
      `{"model":"gpt-4o","messages":[{"role":"user","content":"go"},{"role":"assistant","content":"a"},{"role":"user","content":"b"},` +
      `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":${JSON.stringify(PYTEST_FAIL)}}]}`;
    const view = decodeRequest('openai', raw);
    const out = replaced(view.messages, 1, 3);
    out[3]!.content = 'FAILED tests/test_cart.py::test_discount_applied <<cg:aaaaaaaaaaaaaaaa>>';
    const res = encodeRequest(view, out, NO_INJECT);
    expect(res.discarded).toEqual([]);
    expect(bodyMessages(res.raw).map((m) => m.content)).toEqual(['go', SUMMARY, null, out[3]!.content]);
  });

  it.each([
    ['a bare deletion', (m: Message[]) => [...m.slice(0, 2), ...m.slice(4)]],
    ['a cut that orphans a tool result', (m: Message[]) => replaced(m, 2, 3)],
    [
      'a new message carrying a tool id',
      (m: Message[]) => [...m.slice(0, 2), { role: 'tool' as const, tool_call_id: 'call_9', content: 'x' }, ...m.slice(4)],
    ],
  ])('declines %s and forwards the received body', (_name, edit) => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const res = encodeRequest(view, edit(view.messages), NO_INJECT);
    expect(res.raw).toBe(OPENAI_HOSTILE);
    expect(res.changed).toBe(false);
    expect(res.discarded.length).toBeGreaterThan(0);
  });

  it('declines when a body message could not be normalized (it cannot be judged)', () => {
    const raw =
      '{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":"a"},{"role":"user","content":42},{"role":"assistant","content":"c"},{"role":"user","content":"d"}]}';
    const view = decodeRequest('openai', raw);
    expect(encodeRequest(view, replaced(view.messages, 1, 3), NO_INJECT).raw).toBe(raw);
  });
});

describe('rebuild (Anthropic)', () => {
  it('merges the summary into the first user turn as a text block, keeping that turn’s received bytes', () => {
    const raw = ANTHROPIC_HOSTILE;
    const view = decodeRequest('anthropic', raw);
    // normalized: 0 user(task+image), 1 assistant(tool_use×2), 2-4 tool outputs, 5 user(note), 6 assistant
    expect(view.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'user', 'assistant']);
    const res = encodeRequest(view, replaced(view.messages, 1, 6), NO_INJECT);
    expect(res.discarded).toEqual([]);
    const msgs = bodyMessages(res.raw);
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant']);
    const first = (JSON.parse(raw) as { messages: Array<{ content: unknown[] }> }).messages[0]!;
    expect(msgs[0]!.content).toEqual([...first.content, { type: 'text', text: SUMMARY }]);
    const m0 = raw.slice(view.index.message(0)!.start, view.index.message(0)!.end);
    expect(res.raw).toContain(m0.slice(0, m0.lastIndexOf(']')));
    expect(res.raw).toContain(raw.slice(view.index.message(3)!.start, view.index.message(3)!.end));
    expect(validateProviderShape('anthropic', JSON.parse(res.raw))).toEqual([]);
  });

  it('turns a string first turn into blocks without re-encoding its text', () => {
    const raw =
      '{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"fix \\u0063art.py"},{"role":"assistant","content":"ok"},{"role":"user","content":"more"},{"role":"assistant","content":"done"}]}';
    const view = decodeRequest('anthropic', raw);
    const res = encodeRequest(view, replaced(view.messages, 1, 3), NO_INJECT);
    expect(res.raw).toBe(
      `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"fix \\u0063art.py"},${JSON.stringify({ type: 'text', text: SUMMARY })}]},{"role":"assistant","content":"done"}]}`,
    );
  });

  it('declines a cut through a body message (one tool_result of two)', () => {
    const view = decodeRequest('anthropic', ANTHROPIC_HOSTILE);
    const out = [...view.messages.slice(0, 3), ...view.messages.slice(4)];
    out.splice(1, 2, { role: 'user', content: SUMMARY });
    expect(encodeRequest(view, out, NO_INJECT).raw).toBe(ANTHROPIC_HOSTILE);
  });
});

describe('rebuild over random bodies', () => {
  function check(dialect: Dialect, seed: number): number {
    const rng = mulberry32(seed);
    const gen = randomConversation(dialect, rng, slotToolOutput);
    const raw = flatten(gen.root, gen.slots, new Map());
    const view = decodeRequest(dialect, raw);
    const body = (i: number) => raw.slice(view.index.message(i)!.start, view.index.message(i)!.end);
    let rebuilt = 0;
    // Every cut that keeps tool exchanges whole: from the first assistant to before a later one.
    const assistants = view.messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
    for (const end of assistants.slice(1)) {
      const out = replaced(view.messages, assistants[0]!, end);
      const res = encodeRequest(view, out, { injectExpand: rng() < 0.5 });
      expect(res.discarded).toEqual([]);
      expect(validateProviderShape(dialect, JSON.parse(res.raw))).toEqual([]);
      // The tail is every body message from the cut on — including any turn with nothing normalized.
      const total = (view.body.messages as unknown[]).length;
      const tail = Array.from({ length: total - view.slots[end]!.msg }, (_, k) => view.slots[end]!.msg + k);
      for (const k of tail) expect(res.raw).toContain(body(k));
      const head = dialect === 'openai' ? view.slots[assistants[0]! - 1]!.msg + 2 : 1;
      expect(bodyMessages(res.raw)).toHaveLength(head + tail.length);
      rebuilt++;
    }
    return rebuilt;
  }

  it('rebuilds valid bodies that keep every surviving message byte-identical (250 per dialect)', () => {
    let total = 0;
    for (let seed = 1; seed <= 250; seed++) total += check('openai', seed) + check('anthropic', seed + 10_000);
    expect(total).toBeGreaterThan(500);
  });
});
