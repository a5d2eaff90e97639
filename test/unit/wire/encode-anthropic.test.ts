// Anthropic write-back: a rewritten tool_result lands on exactly its string (or its text element),
// sibling images, thinking signatures and tool_use inputs keep their bytes, and metadata-only
// cache_control writes land on the right raw block.
import type { ContentBlock } from '@context-guru/components';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { ANTHROPIC_HOSTILE, PYTEST_FAIL, withContent } from './bodies.fixture';

const NO_INJECT = { injectExpand: false };
const MASKED =
  '[older tool output masked; starts: ===== test session starts] <<cg:9f2a3b4c5d6e7f80>> [full output: call context_guru_expand]';

function replaceOnce(raw: string, from: string, to: string): string {
  const at = raw.indexOf(from);
  expect(at).toBeGreaterThanOrEqual(0);
  expect(raw.indexOf(from, at + 1)).toBe(-1);
  return raw.slice(0, at) + to + raw.slice(at + from.length);
}

describe('encodeRequest (anthropic)', () => {
  const view = decodeRequest('anthropic', ANTHROPIC_HOSTILE);

  it('rewrites a string tool_result and nothing else', () => {
    const res = encodeRequest(view, withContent(view.messages, 2, MASKED), NO_INJECT);
    expect(res.raw).toBe(replaceOnce(ANTHROPIC_HOSTILE, JSON.stringify(PYTEST_FAIL), JSON.stringify(MASKED)));
    expect(res.raw).toContain('"x_trace": 9007199254740993');
    const again = decodeRequest('anthropic', res.raw);
    expect(again.messages[2]!.content).toBe(MASKED);
    expect(again.hasMarkers).toBe(true);
    expect(validateProviderShape('anthropic', JSON.parse(res.raw))).toEqual([]);
  });

  it('rewrites one text element of an array tool_result, keeping the image sibling byte-identical', () => {
    const res = encodeRequest(view, withContent(view.messages, 4, '(truncated)'), NO_INJECT);
    expect(res.raw).toBe(replaceOnce(ANTHROPIC_HOSTILE, String.raw`"(file truncated \u2026)"`, '"(truncated)"'));
    expect(res.raw).toContain('{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}');
  });

  it('accumulates several edits on one body message', () => {
    const out = withContent(view.messages, 2, 'a');
    out[3]!.content = 'b';
    out[4]!.content = 'c';
    const res = encodeRequest(view, out, NO_INJECT);
    const parsed = JSON.parse(res.raw) as { messages: { content: { content: unknown }[] }[] };
    expect(parsed.messages[2]!.content[0]!.content).toBe('a');
    expect(parsed.messages[2]!.content[1]!.content).toEqual([
      { type: 'text', text: 'b' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
      { type: 'text', text: 'c' },
    ]);
    expect(res.discarded).toEqual([]);
  });

  it('maps a metadata-only write on a user group back to its raw block index', () => {
    const out = structuredClone(view.messages);
    (out[5]!.content as ContentBlock[])[0]!.cache_control = { type: 'ephemeral' };
    const res = encodeRequest(view, out, NO_INJECT);
    expect(res.raw).toBe(
      replaceOnce(
        ANTHROPIC_HOSTILE,
        '{"type":"text","text":"note: use Python 3.11"}',
        '{"type":"text","text":"note: use Python 3.11","cache_control":{"type":"ephemeral"}}',
      ),
    );
    expect(res.breakpoints).toBe(3);
    expect(validateProviderShape('anthropic', JSON.parse(res.raw))).toEqual([]);
  });

  it('adds a breakpoint to an image block and to the last assistant text block', () => {
    const out = structuredClone(view.messages);
    (out[0]!.content as ContentBlock[])[1]!.cache_control = { type: 'ephemeral' };
    (out[1]!.content as ContentBlock[])[1]!.cache_control = { type: 'ephemeral', ttl: '1h' };
    const res = encodeRequest(view, out, NO_INJECT);
    const parsed = JSON.parse(res.raw) as { messages: { content: Record<string, unknown>[] }[] };
    expect(parsed.messages[0]!.content[1]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(parsed.messages[1]!.content[1]!.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(parsed.messages[1]!.content[2]!.cache_control).toBeUndefined(); // the tool_use after it
    expect(res.breakpoints).toBe(4);
  });

  it('refuses breakpoints beyond the provider cap of 4 and reports them discarded', () => {
    const out = structuredClone(view.messages);
    (out[0]!.content as ContentBlock[])[0]!.cache_control = { type: 'ephemeral' };
    (out[1]!.content as ContentBlock[])[1]!.cache_control = { type: 'ephemeral' };
    (out[5]!.content as ContentBlock[])[0]!.cache_control = { type: 'ephemeral' };
    const res = encodeRequest(view, out, NO_INJECT);
    expect(res.discarded).toEqual([5]);
    expect(res.breakpoints).toBe(4);
    expect(validateProviderShape('anthropic', JSON.parse(res.raw))).toEqual([]);
  });

  it('rewrites assistant text blocks but discards changes to thinking or tool_use', () => {
    const text = structuredClone(view.messages);
    (text[1]!.content as ContentBlock[])[1] = { type: 'text', text: 'Running.' };
    expect(encodeRequest(view, text, NO_INJECT).raw).toBe(replaceOnce(ANTHROPIC_HOSTILE, '"Running the tests."', '"Running."'));

    const thinking = structuredClone(view.messages);
    (thinking[1]!.content as ContentBlock[])[0] = { type: 'thinking', thinking: 'x', signature: 'EqQBCkYIARgCIkB+/sig==' };
    expect(encodeRequest(view, thinking, NO_INJECT)).toMatchObject({ raw: ANTHROPIC_HOSTILE, discarded: [1] });

    const call = structuredClone(view.messages);
    call[1]!.tool_calls![0]!.arguments = '{"command":"ls"}';
    expect(encodeRequest(view, call, NO_INJECT)).toMatchObject({ raw: ANTHROPIC_HOSTILE, discarded: [1] });
  });

  it('rewrites string content of user and assistant messages', () => {
    const res = encodeRequest(view, withContent(view.messages, 6, 'Patching.'), NO_INJECT);
    expect(res.raw).toBe(replaceOnce(ANTHROPIC_HOSTILE, '"I will patch cart.py."', '"Patching."'));
  });

  it('writes a plain-string rewrite of a single text block into that block', () => {
    const res = encodeRequest(view, withContent(view.messages, 5, 'note: py3.11'), NO_INJECT);
    expect(res.raw).toBe(replaceOnce(ANTHROPIC_HOSTILE, '"note: use Python 3.11"', '"note: py3.11"'));
  });

  it('discards a plain-string rewrite of a message that also holds an image', () => {
    expect(encodeRequest(view, withContent(view.messages, 0, 'fix it'), NO_INJECT)).toMatchObject({
      raw: ANTHROPIC_HOSTILE,
      changed: false,
      discarded: [0],
    });
  });

  it('discards turning a tool output into blocks', () => {
    const res = encodeRequest(view, withContent(view.messages, 2, [{ type: 'text', text: 'x' }]), NO_INJECT);
    expect(res).toMatchObject({ raw: ANTHROPIC_HOSTILE, discarded: [2] });
  });

  it('writes into the messages array JSON.parse kept when the key is duplicated', () => {
    const raw = '{"messages":[{"role":"user","content":"decoy"}],"messages":[{"role":"user","content":"real text"}]}';
    const v = decodeRequest('anthropic', raw);
    expect(encodeRequest(v, withContent(v.messages, 0, 'real'), NO_INJECT).raw).toBe(
      '{"messages":[{"role":"user","content":"decoy"}],"messages":[{"role":"user","content":"real"}]}',
    );
  });
});
