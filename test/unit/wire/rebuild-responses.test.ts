// summarize's count-changing write-back on the Responses API: a run of whole turns is replaced by
// one summary message item; every kept item (reasoning with its encrypted_content, compaction,
// unknown items) keeps its received bytes, the turn a call joined and the reasoning before a call
// go with it, the result passes the Responses shape validator, and what cannot be judged declines.
import type { Message } from '@context-guru/components';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { callItem, responsesTurn, textItem } from '../../support/responses-fixtures';
import { agentSteps } from '../../support/transcripts';

type Item = Record<string, unknown>;
const NO_INJECT = { injectExpand: false };
const SUMMARY = '=== History Summary ===\n<summary>read two files, tests still fail</summary> <<cg:0123456789abcdef>>';
const SUMMARY_ITEM = JSON.stringify({ type: 'message', role: 'user', content: [{ type: 'input_text', text: SUMMARY }] });

/** The normalized messages with [start, end) replaced by one user summary, as summarize leaves them. */
function summarized(messages: readonly Message[], start: number, end: number): Message[] {
  const summary: Message = { role: 'user', content: SUMMARY };
  return [...messages.slice(0, start), summary, ...messages.slice(end)].map((m) => structuredClone(m));
}

/** Index of the normalized message that is the assistant turn calling `callId`. */
const turnOf = (messages: readonly Message[], callId: string) => messages.findIndex((m) => m.tool_calls?.some((c) => c.id === callId));

const itemsOf = (raw: string) => (JSON.parse(raw) as { input: Item[] }).input;

describe('rebuild (Responses)', () => {
  const steps = agentSteps(6, 71);
  const raw = JSON.stringify(responsesTurn(steps, 6));
  const view = decodeRequest('responses', raw);
  const input = view.body.input as Item[];
  const bytes = (i: number) => raw.slice(view.index.message(i)!.start, view.index.message(i)!.end);

  it('drops whole turns (reasoning, call, output) for one summary item; everything else keeps its bytes', () => {
    // Steps 2 and 3 (after the compaction and unknown items of step 0, the custom call of step 1).
    const [from, to] = [turnOf(view.messages, steps[2]!.id), turnOf(view.messages, steps[4]!.id)];
    const res = encodeRequest(view, summarized(view.messages, from, to), NO_INJECT);
    expect(res).toMatchObject({ changed: true, discarded: [] });
    const dropped = new Set([steps[2]!.id, steps[3]!.id]);
    const firstDropped = input.findIndex((it) => it.call_id === steps[2]!.id) - 1; // its reasoning item
    const expected: string[] = [];
    input.forEach((it, i) => {
      if (i === firstDropped) expected.push(SUMMARY_ITEM);
      const own = typeof it.call_id === 'string' ? it.call_id : String(input[i + 1]?.call_id);
      if (!dropped.has(own)) expected.push(bytes(i));
    });
    const list = view.index.topLevel('input')!;
    expect(res.raw).toBe(`${raw.slice(0, list.start)}[${expected.join(',')}]${raw.slice(list.end)}`);
    expect(validateProviderShape('responses', JSON.parse(res.raw))).toEqual([]);
    // The reasoning items of the dropped turns went with them; the others are there byte for byte.
    expect(itemsOf(res.raw).filter((it) => it.type === 'reasoning')).toHaveLength(4);
  });

  it('drops an assistant message with the calls that joined it, parallel calls and their outputs', () => {
    const base = responsesTurn(steps, 2);
    const extra: Item[] = [
      { type: 'reasoning', id: 'rs_x', summary: [], encrypted_content: 'gAAAAx==' },
      textItem('msg_x', 'Checking two things at once.'),
      callItem('fc_a', 'call_a', 'bash', '{"arg":"ls"}'),
      callItem('fc_b', 'call_b', 'bash', '{"arg":"pwd"}'),
      { type: 'function_call_output', call_id: 'call_a', output: 'a\nb\nc' },
      { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_image', image_url: 'data:image/png;base64,AA==' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'and now?' }] },
      textItem('msg_y', 'Done.'),
    ];
    const body = JSON.stringify({ ...base, input: [...(base.input as Item[]), ...extra] });
    const v = decodeRequest('responses', body);
    const at = v.messages.findIndex((m) => m.tool_calls?.some((c) => c.id === 'call_a'));
    // The message with both calls is one normalized turn; its one text output the next message.
    expect(v.messages[at]!.tool_calls!.map((c) => c.id)).toEqual(['call_a', 'call_b']);
    const res = encodeRequest(v, summarized(v.messages, at, at + 2), NO_INJECT);
    expect(res).toMatchObject({ changed: true, discarded: [] });
    const out = itemsOf(res.raw);
    for (const id of ['rs_x', 'msg_x', 'fc_a', 'fc_b']) expect(out.some((it) => it.id === id)).toBe(false);
    expect(out.some((it) => it.call_id === 'call_a' || it.call_id === 'call_b')).toBe(false);
    expect(out.slice(-3).map((it) => it.type === 'message' && it.role)).toEqual(['user', 'user', 'assistant']);
    expect(validateProviderShape('responses', JSON.parse(res.raw))).toEqual([]);
  });

  it('declines when the run would drop a compaction or unknown item, or the body continues a stored response', () => {
    const [from, to] = [turnOf(view.messages, steps[0]!.id), turnOf(view.messages, steps[2]!.id)];
    const over = encodeRequest(view, summarized(view.messages, from, to), NO_INJECT);
    expect(over).toMatchObject({ raw, changed: false });
    expect(over.discarded.length).toBeGreaterThan(0);
    const stored = JSON.stringify({ ...responsesTurn(steps, 6), store: true, previous_response_id: 'resp_1' });
    const sv = decodeRequest('responses', stored);
    const [a, b] = [turnOf(sv.messages, steps[2]!.id), turnOf(sv.messages, steps[4]!.id)];
    expect(encodeRequest(sv, summarized(sv.messages, a, b), NO_INJECT)).toMatchObject({ raw: stored, changed: false });
  });
});
