// OpenAI write-back: only a changed message's `content` value moves; every other byte of the
// body — 64-bit ints, escapes, unknown fields, whitespace — reaches the provider as sent.
import type { Message } from '@context-guru/components';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { OPENAI_HOSTILE, PYTEST_FAIL, withContent } from './bodies.fixture';

const NO_INJECT = { injectExpand: false };
const MASKED =
  '[older tool output masked; starts: ===== test session starts =====] <<cg:9f2a3b4c5d6e7f80>> [full output: call context_guru_expand]';

function replaceOnce(raw: string, from: string, to: string): string {
  const at = raw.indexOf(from);
  expect(at).toBeGreaterThanOrEqual(0);
  expect(raw.indexOf(from, at + 1)).toBe(-1);
  return raw.slice(0, at) + to + raw.slice(at + from.length);
}

describe('encodeRequest (openai)', () => {
  it('forwards the exact bytes when nothing changed', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const res = encodeRequest(
      view,
      view.messages.map((m) => structuredClone(m)),
      NO_INJECT,
    );
    expect(res).toEqual({ raw: OPENAI_HOSTILE, changed: false, discarded: [], injected: false, breakpoints: 0 });
  });

  it('replaces only the tool message content value', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const res = encodeRequest(view, withContent(view.messages, 3, MASKED), NO_INJECT);
    expect(res.changed).toBe(true);
    expect(res.discarded).toEqual([]);
    expect(res.raw).toBe(replaceOnce(OPENAI_HOSTILE, JSON.stringify(PYTEST_FAIL), JSON.stringify(MASKED)));
    expect(res.raw).toContain('"seed": 12345678901234567890');
    expect(decodeRequest('openai', res.raw).messages[3]!.content).toBe(MASKED);
    expect(validateProviderShape('openai', JSON.parse(res.raw))).toEqual([]);
  });

  it('replaces an escaped string value by its new JSON string, leaving its neighbours escaped', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const res = encodeRequest(view, withContent(view.messages, 5, 'Looking now.'), NO_INJECT);
    expect(res.raw).toBe(replaceOnce(OPENAI_HOSTILE, String.raw`"Looking at \u2028 the \"failure\" now\/"`, '"Looking now."'));
    expect(res.raw).toContain(String.raw`"You are a careful \u0063oding agent."`);
  });

  it('rewrites one text part and keeps the image part byte-identical', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const parts = structuredClone(view.messages[4]!.content) as { type: string; text?: string }[];
    parts[0]!.text = 'and this';
    const res = encodeRequest(view, withContent(view.messages, 4, parts as Message['content']), NO_INJECT);
    expect(res.raw).toBe(replaceOnce(OPENAI_HOSTILE, '"text":"and this screenshot"', '"text":"and this"'));
  });

  it('does not flatten mixed content into a string', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const res = encodeRequest(view, withContent(view.messages, 4, 'flattened'), NO_INJECT);
    expect(res).toMatchObject({ raw: OPENAI_HOSTILE, changed: false, discarded: [4] });
  });

  it('writes a string over a parts array made only of plain text parts', () => {
    const raw = '{"messages":[{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}';
    const view = decodeRequest('openai', raw);
    const res = encodeRequest(view, withContent(view.messages, 0, 'ab!'), NO_INJECT);
    expect(res.raw).toBe('{"messages":[{"role":"tool","tool_call_id":"c1","content":"ab!"}]}');
  });

  it('discards role, tool_calls and name changes and reports their indices, writing the rest', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const out = withContent(view.messages, 3, MASKED);
    out[1]!.role = 'assistant';
    out[2]!.tool_calls![0]!.arguments = '{"cmd":"ls"}';
    out[5]!.name = 'bot';
    const res = encodeRequest(view, out, NO_INJECT);
    expect(res.discarded).toEqual([1, 2, 5]);
    expect(res.raw).toBe(replaceOnce(OPENAI_HOSTILE, JSON.stringify(PYTEST_FAIL), JSON.stringify(MASKED)));
  });

  it('discards everything when the message count changed', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const out = withContent(view.messages, 3, MASKED).slice(0, 5);
    const res = encodeRequest(view, out, NO_INJECT);
    expect(res).toMatchObject({ raw: OPENAI_HOSTILE, changed: false, discarded: [3, 5] });
  });

  it('inserts an added cache_control into its part as a metadata-only write', () => {
    const raw = '{"messages":[{"role":"user","content":[{"type":"text","text":"hi" } ,{"type":"text","text":"there"}]}]}';
    const view = decodeRequest('openai', raw);
    const out = structuredClone(view.messages);
    (out[0]!.content as { cache_control?: unknown }[])[0]!.cache_control = { type: 'ephemeral' };
    const res = encodeRequest(view, out, NO_INJECT);
    expect(res.raw).toBe(
      '{"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"} } ,{"type":"text","text":"there"}]}]}',
    );
    expect(res.breakpoints).toBe(1);
  });

  it('never overwrites a cache_control the part already has', () => {
    const raw = '{"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}';
    const view = decodeRequest('openai', raw);
    const out = structuredClone(view.messages);
    (out[0]!.content as { cache_control?: unknown }[])[0]!.cache_control = { type: 'ephemeral', ttl: '1h' };
    expect(encodeRequest(view, out, NO_INJECT)).toMatchObject({ raw, changed: false, discarded: [0] });
  });

  it('handles a duplicate content key by writing the one JSON.parse kept', () => {
    const raw = '{"messages":[{"role":"tool","tool_call_id":"c","content":"stale","content":"live output"}]}';
    const view = decodeRequest('openai', raw);
    const res = encodeRequest(view, withContent(view.messages, 0, 'live'), NO_INJECT);
    expect(res.raw).toBe('{"messages":[{"role":"tool","tool_call_id":"c","content":"stale","content":"live"}]}');
  });

  it('keeps skipped malformed messages byte-identical around a change', () => {
    const raw = '{"messages":[ 42 , {"role":"tool","tool_call_id":"c","content":"long output"},{"role":"?"}]}';
    const view = decodeRequest('openai', raw);
    const res = encodeRequest(view, withContent(view.messages, 0, 'short'), NO_INJECT);
    expect(res.raw).toBe('{"messages":[ 42 , {"role":"tool","tool_call_id":"c","content":"short"},{"role":"?"}]}');
  });
});
