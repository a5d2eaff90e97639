// Agent trajectories shaped like real models' sessions, for the billing replay and its test-tier
// gate: the model writes a sentence before its tool calls, often calls two or three tools at once,
// JSON outputs arrive pretty-printed (as `gh --json`, `kubectl -o json`, `npm ls --json` print
// them), and the first output big enough to offload arrives on turn 2, 3 or 4 — after the provider
// already cached a prefix. Outputs are the real command outputs in the component fixtures.
import { fixtureCommandSteps } from './corpus';
import type { AgentStep } from '../test/support/transcripts';

type Json = Record<string, unknown>;

export interface Round {
  /** What the model wrote before its calls. */
  preamble: string;
  calls: AgentStep[];
}

export interface Trajectory {
  name: string;
  rounds: Round[];
}

const TASK = 'The nightly CI run is red. Find out why, fix it, and make sure the tests pass.';
const SYSTEM = 'You are a careful coding agent. Inspect before you edit; prefer small, verifiable steps.';
const TOOLS = ['bash', 'read_file'];
const PREAMBLES = [
  'Let me look at the current state first.',
  'I will check the test output and the related files together.',
  'That narrows it down; let me read the code involved.',
  'Let me confirm with another run.',
];

/** A JSON output the way CLIs print it: pretty, two-space indented. */
function pretty(output: string): string {
  try {
    return JSON.stringify(JSON.parse(output), null, 2);
  } catch {
    return output;
  }
}

const small = (id: string, command: string, output: string): AgentStep => ({ id, tool: 'bash', args: { command }, output });

/**
 * `opening` small turns (nothing to offload yet), then rounds of 1–3 parallel calls over the real
 * outputs, JSON pretty-printed; `offset` rotates which outputs come first.
 */
function build(name: string, opening: number, offset: number, rounds: number): Trajectory {
  const outputs = fixtureCommandSteps();
  const out: Round[] = [];
  const openers = [
    small(`${name}_o0`, 'git status --short', ' M src/cart.py\n?? reports/'),
    small(`${name}_o1`, 'ls', 'README.md\nsrc\ntests\nreports'),
    small(`${name}_o2`, 'git log --oneline -3', 'a1b2c3d Fix totals rounding\n9f8e7d6 Bump deps\n0a1b2c3 Add nightly job'),
  ];
  for (let i = 0; i < opening; i++) out.push({ preamble: PREAMBLES[i % PREAMBLES.length]!, calls: [openers[i % openers.length]!] });
  let k = offset;
  for (let r = 0; r < rounds; r++) {
    const width = 1 + ((r + offset) % 3);
    const calls: AgentStep[] = [];
    for (let c = 0; c < width; c++, k++) {
      const src = outputs[k % outputs.length]!;
      calls.push({ ...src, id: `${name}_${r}_${c}`, output: pretty(src.output) });
    }
    out.push({ preamble: PREAMBLES[(r + 1) % PREAMBLES.length]!, calls });
  }
  return { name, rounds: out };
}

/** First offload on turn 2, 3 and 4; 12–16 turns each. */
export function trajectories(): Trajectory[] {
  return [build('late-2', 1, 0, 14), build('late-3', 2, 23, 13), build('late-4', 3, 47, 12)];
}

/** Claude Code's breakpoint on the newest block of the last message (a string becomes a text block). */
export function markNewestBlock(messages: Json[]): void {
  const last = messages[messages.length - 1]!;
  if (Array.isArray(last.content)) {
    const blocks = last.content as Json[];
    blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: { type: 'ephemeral' } };
  } else {
    last.content = [{ type: 'text', text: last.content, cache_control: { type: 'ephemeral' } }];
  }
}

/** The Anthropic request after `t` rounds, with Claude Code's breakpoints (system and newest block). */
export function anthropicTrajectoryBody(tr: Trajectory, t: number): Json {
  const messages: Json[] = [{ role: 'user', content: TASK }];
  for (const r of tr.rounds.slice(0, t)) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: r.preamble },
        ...r.calls.map((c) => ({ type: 'tool_use', id: `toolu_${c.id}`, name: c.tool, input: c.args })),
      ],
    });
    messages.push({
      role: 'user',
      content: r.calls.map((c) => ({ type: 'tool_result', tool_use_id: `toolu_${c.id}`, content: c.output })),
    });
  }
  markNewestBlock(messages);
  return {
    model: 'claude-fake',
    max_tokens: 4096,
    system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
    messages,
    tools: TOOLS.map((name) => ({
      name,
      description: `The ${name} tool.`,
      input_schema: { type: 'object', properties: { arg: { type: 'string' } } },
    })),
  };
}

export function openaiTrajectoryBody(tr: Trajectory, t: number): Json {
  const messages: Json[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: TASK },
  ];
  for (const r of tr.rounds.slice(0, t)) {
    messages.push({
      role: 'assistant',
      content: r.preamble,
      tool_calls: r.calls.map((c) => ({
        id: `call_${c.id}`,
        type: 'function',
        function: { name: c.tool, arguments: JSON.stringify(c.args) },
      })),
    });
    for (const c of r.calls) messages.push({ role: 'tool', tool_call_id: `call_${c.id}`, content: c.output });
  }
  return {
    model: 'gpt-fake',
    messages,
    tools: TOOLS.map((name) => ({
      type: 'function',
      function: { name, description: `The ${name} tool.`, parameters: { type: 'object', properties: { arg: { type: 'string' } } } },
    })),
  };
}

/** The model's answer on turn t (its next round), for output-token billing. */
export function nextRound(tr: Trajectory, t: number): Round | undefined {
  return tr.rounds[t];
}
