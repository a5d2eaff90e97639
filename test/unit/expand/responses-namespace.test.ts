// Namespaced tools on the Responses API (`{"type":"namespace","name":…,"tools":[…]}`, whose calls
// carry `namespace`): the body's tools and calls go upstream byte for byte beside the expand tool,
// which stays a top-level function; a call named context_guru_expand inside a client's namespace
// is the client's own call, never answered by the gateway nor hidden from the client.
import { isExpandItem } from '../../../libs/engine/src/expand/responses-expand';
import { splitCalls } from '../../../libs/engine/src/expand/expand-calls';
import { decodeRequest, encodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';

const NAMESPACE = {
  type: 'namespace',
  name: 'crm',
  description: 'The CRM server.',
  tools: [
    { type: 'function', name: 'context_guru_expand', description: 'Expands a CRM record.', parameters: { type: 'object' } },
    { type: 'custom', name: 'query', description: 'Free-form query.' },
  ],
};
const NS_CALL = { type: 'function_call', call_id: 'call_ns', namespace: 'crm', name: 'context_guru_expand', arguments: '{"id":"42"}' };
const OURS = { type: 'function_call', call_id: 'call_ours', name: 'context_guru_expand', arguments: '{"id":"0123456789abcdef"}' };

describe('namespaced tools on the Responses API', () => {
  it('forwards the namespace tool and namespaced calls byte for byte, the expand tool appended top-level', () => {
    const body = {
      model: 'gpt-5-codex',
      input: [
        { type: 'message', role: 'user', content: 'look up record 42' },
        NS_CALL,
        { type: 'function_call_output', call_id: 'call_ns', output: 'record 42: ACME' },
      ],
      tools: [NAMESPACE],
    };
    const raw = JSON.stringify(body);
    const view = decodeRequest('responses', raw);
    expect(view.expandToolDeclared).toBe(false);
    const res = encodeRequest(view, view.messages, { injectExpand: true });
    const tools = JSON.stringify(NAMESPACE);
    expect(res.raw.startsWith(raw.slice(0, raw.indexOf(tools) + tools.length))).toBe(true);
    const sent = JSON.parse(res.raw) as { tools: Array<{ type: string; name: string }> };
    expect(sent.tools.map((t) => [t.type, t.name])).toEqual([
      ['namespace', 'crm'],
      ['function', 'context_guru_expand'],
    ]);
    expect(validateProviderShape('responses', sent)).toEqual([]);
  });

  it("a namespaced call named like the expand tool is the client's: not ours to answer or hide", () => {
    expect(isExpandItem(NS_CALL)).toBe(false);
    expect(isExpandItem(OURS)).toBe(true);
    const only = splitCalls('responses', { output: [NS_CALL] });
    expect([only.expand.length, only.client]).toEqual([0, 1]);
    const both = splitCalls('responses', { output: [OURS, NS_CALL] });
    expect([both.expand.length, both.client]).toEqual([1, 1]);
  });
});
