// The project's own corpus of agent transcripts: generated sessions over real files on this
// machine (sources shipped in node_modules, pytest runs, API payloads, re-reads) plus a session
// replaying every real command output captured in the component fixtures (pytest, jest, tsc,
// make, npm, pip, cargo, git, terraform…), each paired with the command that produced it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentSteps, type AgentStep } from '../test/support/transcripts';

const ROOT = join(__dirname, '..');

interface FixtureMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; name: string; arguments: string }>;
}

/** Every distinct real tool output (≥ 400 chars) in the component fixtures, with its command. */
export function fixtureCommandSteps(): AgentStep[] {
  const seen = new Set<string>();
  const steps: AgentStep[] = [];
  for (const file of fixtureInputs()) {
    const { messages } = JSON.parse(readFileSync(file, 'utf8')) as { messages: FixtureMessage[] };
    const calls = new Map<string, string>();
    for (const m of messages) for (const c of m.tool_calls ?? []) calls.set(c.id, c.arguments);
    for (const m of messages) {
      if (m.role !== 'tool' || typeof m.content !== 'string' || m.content.length < 400 || seen.has(m.content)) continue;
      seen.add(m.content);
      let command = 'run';
      try {
        command = (JSON.parse(calls.get(m.tool_call_id ?? '') ?? '{}') as { command?: string }).command ?? 'run';
      } catch {
        // arguments that are not JSON: keep the generic command
      }
      steps.push({ id: `call_fx_${steps.length}`, tool: 'bash', args: { command }, output: m.content });
    }
  }
  return steps;
}

function fixtureInputs(): string[] {
  const base = join(ROOT, 'test', 'fixtures', 'components');
  const out: string[] = [];
  for (const component of readdirSync(base).sort()) {
    for (const c of readdirSync(join(base, component)).sort()) out.push(join(base, component, c, 'input.json'));
  }
  return out;
}

export interface CorpusSession {
  name: string;
  steps: AgentStep[];
}

export function corpus(): CorpusSession[] {
  return [
    { name: 'agent-seed-3', steps: agentSteps(40, 3) },
    { name: 'agent-seed-7', steps: agentSteps(40, 7) },
    { name: 'agent-seed-11', steps: agentSteps(40, 11) },
    { name: 'command-outputs', steps: fixtureCommandSteps() },
  ];
}
