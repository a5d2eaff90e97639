// The load benchmarks' request: an OpenAI chat body shaped like a real agent trajectory, built
// from the real command outputs captured in the component fixtures. Assistant turns write text
// before their tool calls, often several calls at once (parallel tool calls), and the body is
// pretty-printed as some SDKs send it — so the wire decoder sees whitespace, escapes and nesting
// a compact synthetic body would not have. Deterministic: the same bytes on every run.
import { fixtureCommandSteps } from './corpus';

const SYSTEM =
  'You are a coding agent working in a TypeScript and Python monorepo. Inspect before you edit; run the tests after every change.';
const TASK = 'The CI run on main is red. Find out which suites fail, fix the cause, and keep the HTTP client tests green.';
const PREAMBLES = [
  'Let me look at the current state of the test suites before changing anything.',
  'Those failures look related. I will run the remaining checks in parallel to see the whole picture.',
  'The error points at the parser. Checking the build and the lint output at the same time.',
  'That narrows it down. Re-running the affected commands to confirm.',
];

const TOOLS = ['bash', 'read_file', 'write_file'].map((name) => ({
  type: 'function',
  function: {
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { command: { type: 'string' }, path: { type: 'string' } } },
  },
}));

/**
 * Messages up to the first turn whose pretty-printed body reaches `targetBytes`; each assistant
 * turn makes 1–3 parallel calls (cycling) answered by one tool message each.
 */
export function agentPayload(targetBytes = 60_000): { body: Record<string, unknown>; raw: string } {
  const steps = fixtureCommandSteps();
  const messages: Array<Record<string, unknown>> = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: TASK },
  ];
  let i = 0;
  let turn = 0;
  let raw = '';
  let body: Record<string, unknown> = {};
  while (i < steps.length) {
    const batch = steps.slice(i, i + 1 + (turn % 3));
    i += batch.length;
    messages.push({
      role: 'assistant',
      content: PREAMBLES[turn % PREAMBLES.length],
      tool_calls: batch.map((s) => ({
        id: `call_${turn}_${s.id}`,
        type: 'function',
        function: { name: 'bash', arguments: JSON.stringify(s.args) },
      })),
    });
    for (const s of batch) messages.push({ role: 'tool', tool_call_id: `call_${turn}_${s.id}`, content: s.output });
    turn++;
    body = { model: 'gpt-4.1', messages: [...messages, { role: 'user', content: 'Continue.' }], tools: TOOLS, temperature: 0.2 };
    raw = JSON.stringify(body, null, 2);
    if (raw.length >= targetBytes) break;
  }
  return { body, raw };
}
