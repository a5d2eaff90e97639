// The expand tool is appended last to `tools` with fixed bytes, never twice, and never when the
// caller forces a tool choice; the proxy decides policy, the encoder enforces these floors.
import type { Dialect } from '@context-guru/components';
import { countTokens, EXPAND_TOOL_NAME } from '@context-guru/components';
import { expandToolJson } from '../../../libs/engine/src/wire/expand-tool';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { ANTHROPIC_HOSTILE, OPENAI_HOSTILE } from './bodies.fixture';

const INJECT = { injectExpand: true };

describe('expand tool bytes', () => {
  it('has a fixed key order in both dialects', () => {
    const desc = JSON.stringify(JSON.parse(expandToolJson('anthropic')).description);
    const schema = '{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}';
    expect(expandToolJson('openai')).toBe(
      `{"type":"function","function":{"name":"${EXPAND_TOOL_NAME}","description":${desc},"parameters":${schema}}}`,
    );
    expect(expandToolJson('anthropic')).toBe(`{"name":"${EXPAND_TOOL_NAME}","description":${desc},"input_schema":${schema}}`);
    expect(desc).toContain('<<cg:HASH>>');
    // The model is told both spellings of the id are accepted (SPEC §3).
    expect(desc).toContain('id: the HASH or the whole marker');
  });

  it('costs what its wording is worth: at most 55 / 61 o200k tokens (Anthropic / OpenAI)', () => {
    // Billed on every turn of every offering session; the earlier wording cost 100 / 106.
    expect(countTokens(expandToolJson('anthropic'))).toBeLessThanOrEqual(55);
    expect(countTokens(expandToolJson('openai'))).toBeLessThanOrEqual(61);
  });
});

describe('expand tool injection', () => {
  it('appends the tool after the last declared tool, touching nothing else (openai)', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    const res = encodeRequest(view, view.messages, INJECT);
    const anchor = '"properties":{"cmd":{"type":"string"}}}}}';
    const at = OPENAI_HOSTILE.indexOf(anchor) + anchor.length;
    expect(res.raw).toBe(`${OPENAI_HOSTILE.slice(0, at)},${expandToolJson('openai')}${OPENAI_HOSTILE.slice(at)}`);
    expect(res).toMatchObject({ changed: true, injected: true, discarded: [] });
    const tools = (JSON.parse(res.raw) as { tools: { function: { name: string } }[] }).tools;
    expect(tools.map((t) => t.function.name)).toEqual(['bash', EXPAND_TOOL_NAME]);
  });

  it('appends last on anthropic, and the request stays valid and marker-free', () => {
    const view = decodeRequest('anthropic', ANTHROPIC_HOSTILE);
    const res = encodeRequest(view, view.messages, INJECT);
    const body = JSON.parse(res.raw) as { tools: { name: string }[] };
    expect(body.tools.map((t) => t.name)).toEqual(['Bash', 'Read', EXPAND_TOOL_NAME]);
    expect(validateProviderShape('anthropic', body)).toEqual([]);
    const again = decodeRequest('anthropic', res.raw);
    expect(again.expandToolDeclared).toBe(true);
    expect(again.hasMarkers).toBe(false); // the description quotes <<cg:HASH>> but lives in tools
  });

  it('is idempotent: a body that already declares it is forwarded as is', () => {
    const first = encodeRequest(
      decodeRequest('anthropic', ANTHROPIC_HOSTILE),
      decodeRequest('anthropic', ANTHROPIC_HOSTILE).messages,
      INJECT,
    );
    const view = decodeRequest('anthropic', first.raw);
    const second = encodeRequest(view, view.messages, INJECT);
    expect(second).toMatchObject({ raw: first.raw, changed: false, injected: false });
    expect(second.raw.split(EXPAND_TOOL_NAME)).toHaveLength(2);
  });

  it('is deterministic across turns', () => {
    const a = decodeRequest('openai', OPENAI_HOSTILE);
    const b = decodeRequest('openai', OPENAI_HOSTILE);
    expect(encodeRequest(a, a.messages, INJECT).raw).toBe(encodeRequest(b, b.messages, INJECT).raw);
  });

  it('is refused when tool_choice forces or forbids tools', () => {
    const bodies: [Dialect, string][] = [
      ['openai', '{"tool_choice":"required","tools":[],"messages":[]}'],
      ['openai', '{"tool_choice":"none","messages":[]}'],
      ['openai', '{"tool_choice":{"type":"function","function":{"name":"bash"}},"tools":[],"messages":[]}'],
      ['anthropic', '{"tool_choice":{"type":"any"},"tools":[],"messages":[]}'],
      ['anthropic', '{"tool_choice":{"type":"tool","name":"Bash"},"tools":[],"messages":[]}'],
      ['anthropic', '{"tool_choice":{"type":"none"},"messages":[]}'],
    ];
    for (const [dialect, raw] of bodies) {
      const view = decodeRequest(dialect, raw);
      expect(encodeRequest(view, view.messages, INJECT)).toMatchObject({ raw, changed: false, injected: false });
    }
  });

  it('injects under an explicit auto tool_choice', () => {
    const raw = '{"tool_choice":{"type":"auto","disable_parallel_tool_use":true},"tools":[],"messages":[]}';
    const view = decodeRequest('anthropic', raw);
    expect(encodeRequest(view, view.messages, INJECT).raw).toBe(
      `{"tool_choice":{"type":"auto","disable_parallel_tool_use":true},"tools":[${expandToolJson('anthropic')}],"messages":[]}`,
    );
  });

  it('does nothing unless asked', () => {
    const view = decodeRequest('openai', OPENAI_HOSTILE);
    expect(encodeRequest(view, view.messages, { injectExpand: false }).injected).toBe(false);
  });

  it('creates `tools` at the end of the body when absent', () => {
    const raw = '{"model":"m","messages":[{"role":"user","content":"hi"}] }';
    const view = decodeRequest('openai', raw);
    expect(encodeRequest(view, view.messages, INJECT).raw).toBe(
      `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[${expandToolJson('openai')}] }`,
    );
  });

  it('fills an empty tools array and refuses a non-array tools or legacy functions', () => {
    const empty = decodeRequest('anthropic', '{"messages":[],"tools":[ ]}');
    expect(encodeRequest(empty, empty.messages, INJECT).raw).toBe(`{"messages":[],"tools":[${expandToolJson('anthropic')} ]}`);
    for (const raw of ['{"messages":[],"tools":null}', '{"messages":[],"functions":[{"name":"f"}]}']) {
      const view = decodeRequest('openai', raw);
      expect(encodeRequest(view, view.messages, INJECT)).toMatchObject({ raw, injected: false });
    }
  });

  it('combines with message edits in one splice', () => {
    const view = decodeRequest('anthropic', ANTHROPIC_HOSTILE);
    const out = structuredClone(view.messages);
    out[2]!.content = 'short <<cg:0123456789abcdef>> [full output: call context_guru_expand]';
    const res = encodeRequest(view, out, INJECT);
    const again = decodeRequest('anthropic', res.raw);
    expect(again.messages[2]!.content).toBe(out[2]!.content);
    expect(again.expandToolDeclared).toBe(true);
    expect(again.hasMarkers).toBe(true);
  });
});
