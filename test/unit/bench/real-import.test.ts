// The real-corpus import (scripts/import-real-trajectories.ts): text actions become tool calls of
// one bash tool with the next observation as their output, native tool calls keep their ids,
// every text is scrubbed (ANSI, registry and mirror hosts, home paths, secrets) and tool outputs
// are capped, both dialects come out valid with one request per model answer, and a needle is a
// line of an early output whose identifier a tool call uses at least three outputs later.
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { readConversation } from '../../../scripts/real-import/conversation';
import { anthropicSession, openaiSession } from '../../../scripts/real-import/dialects';
import { findNeedles } from '../../../scripts/real-import/needles';
import { MAX_TOOL_OUTPUT_CHARS, Scrubber } from '../../../scripts/real-import/scrub';

const fence = (cmd: string) => `THOUGHT: next step.\n\n\`\`\`bash\n${cmd}\n\`\`\``;
const miniText = (outputs: string[], commands: string[]) =>
  JSON.stringify({
    info: { model_stats: { api_calls: commands.length } },
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Fix the bug.' },
      ...commands.flatMap((c, i) => [
        { role: 'assistant', content: fence(c) },
        { role: 'user', content: outputs[i] ?? '' },
      ]),
    ],
  });

describe('the real-corpus import', () => {
  it('turns fenced commands into bash tool calls answered by the next observation, valid in both dialects', () => {
    const conv = readConversation('mini-text', miniText(['a.py\nb.py', 'ok'], ['ls', 'python a.py']), 'seed');
    expect(conv.turns.map((t) => t.kind)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
    const first = conv.turns[1];
    expect(first?.kind === 'assistant' && first.calls[0]?.input).toEqual({ command: 'ls' });
    expect(first?.kind === 'assistant' && first.text).toBe('THOUGHT: next step.');
    for (const [dialect, s] of [
      ['openai', openaiSession(conv)],
      ['anthropic', anthropicSession(conv)],
    ] as const) {
      expect(s.requestEnds).toHaveLength(3);
      for (const end of s.requestEnds)
        expect(validateProviderShape(dialect, { ...s.base, messages: s.messages.slice(0, end) })).toEqual([]);
    }
    expect(readConversation('mini-text', miniText(['x'], ['ls']), 'seed')).toEqual(
      readConversation('mini-text', miniText(['x'], ['ls']), 'seed'),
    );
  });

  it('keeps native tool-call ids and merges consecutive user-side blocks for Anthropic', () => {
    const raw = JSON.stringify({
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'task' },
        {
          role: 'assistant',
          content: 'look',
          tool_calls: [{ id: 'call_00_abc', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_00_abc', content: 'file' },
        { role: 'user', content: 'format reminder' },
        { role: 'exit', content: 'done' },
      ],
    });
    const conv = readConversation('mini-toolcall', raw, 'seed');
    const a = anthropicSession(conv);
    expect(openaiSession(conv).messages[2]).toMatchObject({ tool_calls: [{ id: 'call_00_abc' }] });
    expect(a.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(a.messages[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_00_abc', content: 'file' },
      { type: 'text', text: 'format reminder' },
    ]);
  });

  it('scrubs what must not be committed and caps long tool outputs', () => {
    const s = new Scrubber();
    const dirty =
      '\u001b[31mFAIL\u001b[0m pip from https://files.pythonhosted.org/x and deb.debian.org; /home/alice/proj/a.py /Users/bob/x/y ' +
      'key sk-ant-abcdefghijklmnopqrstuvwxyz012345 API_KEY=abcdefghijklmnop1234 /testbed/home/templates/ /home/user/ok';
    expect(s.text(dirty)).toBe(
      'FAIL pip from https://registry.npm.local/x and deb.debian.local; /home/user/proj/a.py /Users/user/x/y key [REDACTED] API_KEY=[REDACTED] /testbed/home/templates/ /home/user/ok',
    );
    const long = s.toolOutput(`${'h'.repeat(40_000)}${'t'.repeat(40_000)}`);
    expect(long.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
    expect(long).toMatch(/^h+\n\[\.\.\. 32000 characters cut by the corpus import \(cap 48000\) \.\.\.\]\nt+$/);
    expect(s.report()).toContain('1 tool output(s) capped at 48000 chars');
  });

  it('finds a needle only when a tool call uses it at least three outputs later', () => {
    const outputs = ['def compute_total_price(cart):\n    return sum(cart)', 'one', 'two', 'three', 'ok'];
    const late = readConversation(
      'mini-text',
      miniText(outputs, ['cat cart.py', 'ls', 'ls -a', 'pwd', 'grep -n compute_total_price cart.py']),
      'seed',
    );
    expect(findNeedles(late)).toMatchObject([{ text: 'def compute_total_price(cart):', firstToolOutput: 1, inNewest3: false }]);
    const soon = readConversation('mini-text', miniText(outputs, ['cat cart.py', 'ls', 'grep -n compute_total_price cart.py']), 'seed');
    expect(findNeedles(soon)).toEqual([]);
  });
});
