// The agent's own summarisation request is recognised in its last message (past trailing tool
// results on Anthropic), never in tool output and never in an earlier turn.
import { decodeRequest } from '../../../libs/engine/src/wire/request.wire';
import { isAgentCompaction } from '../../../libs/engine/src/session/agent-compaction';

const CLAUDE_CODE_COMPACT =
  'Your task is to create a detailed summary of the conversation so far, paying close attention to the explicit requests and your previous actions.\n' +
  'This summary should be thorough in capturing technical details, code patterns, and architectural decisions.';
const SCRATCHPAD = 'First, reason in your scratchpad. Then, generate the summary in <summary> tags.';

const anthropic = (messages: unknown[]) =>
  decodeRequest('anthropic', JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 8192, messages })).messages;
const openai = (messages: unknown[]) => decodeRequest('openai', JSON.stringify({ model: 'gpt-4o', messages })).messages;

const history = [
  { role: 'user', content: 'Fix the failing parser tests.' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'bash', input: { command: 'pytest -q' } }] },
];

describe('isAgentCompaction', () => {
  it('recognises both phrases as the last user message (string and block content)', () => {
    expect(isAgentCompaction(anthropic([...history, { role: 'user', content: CLAUDE_CODE_COMPACT }]))).toBe(true);
    expect(isAgentCompaction(anthropic([...history, { role: 'user', content: [{ type: 'text', text: SCRATCHPAD }] }]))).toBe(true);
    expect(
      isAgentCompaction(
        openai([
          { role: 'system', content: 'sys' },
          { role: 'user', content: CLAUDE_CODE_COMPACT },
        ]),
      ),
    ).toBe(true);
  });

  it('sees the request next to the tool results of the same Anthropic message, in either order', () => {
    const result = { type: 'tool_result', tool_use_id: 'toolu_01', content: '3 passed' };
    expect(
      isAgentCompaction(anthropic([...history, { role: 'user', content: [result, { type: 'text', text: CLAUDE_CODE_COMPACT }] }])),
    ).toBe(true);
    expect(
      isAgentCompaction(anthropic([...history, { role: 'user', content: [{ type: 'text', text: CLAUDE_CODE_COMPACT }, result] }])),
    ).toBe(true);
  });

  it('ignores tool output that quotes the phrase, and an earlier turn that asked for it', () => {
    const quoting = { type: 'tool_result', tool_use_id: 'toolu_01', content: `prompts.ts:\nconst COMPACT = "${CLAUDE_CODE_COMPACT}";` };
    expect(isAgentCompaction(anthropic([...history, { role: 'user', content: [quoting] }]))).toBe(false);
    expect(
      isAgentCompaction(
        anthropic([
          { role: 'user', content: CLAUDE_CODE_COMPACT },
          { role: 'assistant', content: 'Summary: …' },
          { role: 'user', content: 'continue' },
        ]),
      ),
    ).toBe(false);
    expect(
      isAgentCompaction(
        openai([
          { role: 'user', content: 'go' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: CLAUDE_CODE_COMPACT },
        ]),
      ),
    ).toBe(false);
  });

  it('an ordinary last user message is not a compaction', () => {
    expect(isAgentCompaction(anthropic([...history, { role: 'user', content: 'Please summarise what you did.' }]))).toBe(false);
    expect(isAgentCompaction([])).toBe(false);
  });
});
