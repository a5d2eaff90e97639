// The scripted model's plan for the scratch repo task, decided from the conversation alone (no
// state between requests), so the same requests always get the same answer, with or without
// the gateway in between:
//   1. list the project and run the suite (two parallel shell calls)
//   2. read src/stats.js          3. fix the loop bound          4. re-run the suite
//   5. answer with a VERDICT line built from what the tool results say.
// Like a real model it writes before it acts (thinking with a signature, then a text preamble),
// and whenever the newest tool results — or, before the verdict, the earlier results it reads —
// carry a `<<cg:HASH>>` marker it has not redeemed yet, it first calls context_guru_expand for it
// (by bare hash, later by the whole marker), then reads the original from the expand result. The verdict counts the suite's `ok` / `not ok` lines, so it
// comes out right only if the model saw the originals: a projection or a lost expand changes it.
import { BUGGY_LINE, FIXED_LINE, SOURCE_FILE, TEST_COMMAND } from './scratch-repo';
import type { Conversation, Round } from './agent-conversation';

export const EXPAND_TOOL = 'context_guru_expand';
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;

/** The agent's own tool names for the three kinds of action the plan takes, and its main system prompt. */
export interface AgentTools {
  shell: string;
  read: string;
  edit: string;
  /** How the main loop's system prompt reads (sub-agents and side tasks have their own). */
  system: RegExp;
  /** The arguments of each action, when the agent's tools are not file tools (Codex runs everything as a command). */
  args?: ActionArgs;
}

interface ActionArgs {
  shell(command: string, description: string): Record<string, unknown>;
  read(file: string): Record<string, unknown>;
  edit(file: string, from: string, to: string): Record<string, unknown>;
}

const FILE_TOOL_ARGS: ActionArgs = {
  shell: (command, description) => ({ command, description }),
  read: (file) => ({ file_path: file }),
  edit: (file, from, to) => ({ file_path: file, old_string: from, new_string: to }),
};

// On Vertex AI Claude Code 2.1.332 opens its system prompt with its CLI self-description instead.
export const CLAUDE_TOOLS: AgentTools = {
  shell: 'Bash',
  read: 'Read',
  edit: 'Edit',
  system: /You are a Claude agent|You are Claude Code, Anthropic's official CLI for Claude/,
};
export const QWEN_TOOLS: AgentTools = { shell: 'run_shell_command', read: 'read_file', edit: 'edit', system: /^You are Qwen Code/ };
export const CODEX_TOOLS: AgentTools = {
  shell: 'exec_command',
  read: 'exec_command',
  edit: 'exec_command',
  system: /^You are a coding agent running in the Codex CLI/,
  args: {
    shell: (cmd) => ({ cmd }),
    read: (file) => ({ cmd: `cat ${file}` }),
    // The planted bug is the one `xs.length - 1` in the file.
    edit: (file) => ({ cmd: `sed -i 's/xs.length - 1/xs.length/' ${file}` }),
  },
};

interface PlannedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface Decision {
  thinking: string;
  text: string;
  calls: PlannedCall[];
}

export interface ScriptOptions {
  tools: AgentTools;
  /** Absolute path of the scratch repo (the agents' file tools want absolute paths). */
  workdir: string;
  /** Call context_guru_expand beside the next step's calls instead of alone before them. */
  expandBeside?: boolean;
}

/** Call ids carry the plan step (`S<step>C<n>`; expand calls `X<hash>`) so the script can tell how far it got. */
function callId(dialect: Conversation['dialect'], tag: string, n: number): string {
  const tail = `${tag}C${n}Kq7Lm3Vn8RbT2wYz`.slice(0, Math.max(18, tag.length + 8));
  return dialect === 'anthropic' ? `toolu_01${tail}` : `call_${tail}`;
}

const STEP_RE = /^(?:toolu_01|call_)S(\d)C/;

function stepOf(round: Round): number {
  return Math.max(0, ...round.calls.map((c) => Number(STEP_RE.exec(c.id)?.[1] ?? 0)));
}

/** Every original the model got back through an expand call, by marker hash. */
function expandedOriginals(c: Conversation): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of c.rounds) {
    for (const call of r.calls) {
      if (call.name !== EXPAND_TOOL) continue;
      const hash = String(call.args.id ?? '').replace(/^<<cg:|>>$/g, '');
      const text = r.results.get(call.id);
      if (text !== undefined) out.set(hash, text);
    }
  }
  return out;
}

function markerHashes(text: string): string[] {
  return [...text.matchAll(MARKER)].map((m) => m[1]!);
}

/** A tool result as the model understands it: its text, or the original it expanded for its marker. */
function resolved(text: string, originals: Map<string, string>): string {
  const [hash] = markerHashes(text);
  return hash !== undefined && originals.has(hash) ? originals.get(hash)! : text;
}

/** The result of plan step `step`'s call n as the newest request carries it. */
function rawResultOf(c: Conversation, step: number, n: number): string {
  const id = callId(c.dialect, `S${step}`, n);
  const round = c.rounds.find((r) => r.calls.some((x) => x.id === id));
  return round?.results.get(id) ?? '';
}

function resultOf(c: Conversation, step: number, n: number): string {
  return resolved(rawResultOf(c, step, n), expandedOriginals(c));
}

function suiteCounts(output: string): { ok: number; notOk: number } {
  return { ok: (output.match(/^ok \d+/gm) ?? []).length, notOk: (output.match(/^not ok \d+/gm) ?? []).length };
}

function verdict(c: Conversation): string {
  const before = suiteCounts(resultOf(c, 1, 1));
  const after = suiteCounts(resultOf(c, 4, 0));
  const source = resultOf(c, 2, 0);
  const found = source.includes(BUGGY_LINE.trim()) ? 'the loop in total() stopped one element early' : 'the bug was not where I looked';
  return `VERDICT: ${found}; after the fix in ${SOURCE_FILE} the suite went from ${before.ok} ok / ${before.notOk} not ok to ${after.ok} ok / ${after.notOk} not ok.`;
}

/** The plan steps whose tool results the verdict reads (see verdict()). */
const VERDICT_READS = [1, 2, 4];

/**
 * The first marker the model wants redeemed before it answers: one in the newest tool results, or,
 * when the next answer is the verdict, one in an earlier result the verdict reads — a real model
 * that finds a fact it needs offloaded since it read it asks for it back (one expand away).
 */
function unredeemedMarker(c: Conversation, nextStep: number): string | undefined {
  const last = c.rounds[c.rounds.length - 1];
  if (!last) return undefined;
  const originals = expandedOriginals(c);
  const needed = [...last.results.values()];
  if (nextStep > 4) needed.push(...VERDICT_READS.map((step) => rawResultOf(c, step, step === 1 ? 1 : 0)));
  for (const text of needed) for (const h of markerHashes(text)) if (!originals.has(h)) return h;
  return undefined;
}

function planStep(step: number, c: Conversation, o: ScriptOptions): Decision {
  const { shell, read, edit } = o.tools;
  const args = o.tools.args ?? FILE_TOOL_ARGS;
  const file = `${o.workdir}/${SOURCE_FILE}`;
  const call = (n: number, name: string, args: Record<string, unknown>): PlannedCall => ({
    id: callId(c.dialect, `S${step}`, n),
    name,
    args,
  });
  switch (step) {
    case 1:
      return {
        thinking: 'The user says the suite fails. First see what is in the project and what the test runner prints.',
        text: 'I will list the project and run the test suite.',
        calls: [call(0, shell, args.shell('ls -la', 'List project files')), call(1, shell, args.shell(TEST_COMMAND, 'Run the test suite'))],
      };
    case 2:
      return {
        thinking: 'Only the total() and mean() cases fail; mean() uses total().',
        text: 'The failures all go through total(). Let me read it.',
        calls: [call(0, read, args.read(file))],
      };
    case 3:
      return {
        thinking: 'The loop bound is xs.length - 1, so the last element is never added.',
        text: 'The loop stops one element early; fixing the bound.',
        calls: [call(0, edit, args.edit(file, BUGGY_LINE, FIXED_LINE))],
      };
    case 4:
      return {
        thinking: 'Check that the fix makes the whole suite pass.',
        text: 'Re-running the suite.',
        calls: [call(0, shell, args.shell(TEST_COMMAND, 'Re-run the test suite'))],
      };
    default:
      return { thinking: 'Everything I need is in the tool results.', text: verdict(c), calls: [] };
  }
}

/**
 * What the model copies into the call: the bare hash for the first suite run's output, the whole
 * marker for the re-run's (models copy what they see; the gateway accepts both).
 */
function expandArg(c: Conversation, hash: string): string {
  return stepOf(c.rounds[c.rounds.length - 1]!) <= 1 ? hash : `<<cg:${hash}>>`;
}

/** The model's next answer to the main loop's request. */
export function decide(c: Conversation, o: ScriptOptions): Decision {
  const done = Math.max(0, ...c.rounds.map(stepOf));
  const hash = unredeemedMarker(c, done + 1);
  if (hash === undefined) return planStep(done + 1, c, o);
  const expand = { id: callId(c.dialect, `X${hash.slice(0, 6)}`, 0), name: EXPAND_TOOL, args: { id: expandArg(c, hash) } };
  const next = planStep(done + 1, c, o);
  // Parallel tool use: the expand call beside the next step's own calls, in one response.
  if (o.expandBeside && next.calls.length) return { ...next, calls: [...next.calls, expand] };
  return {
    thinking: 'Part of that output was offloaded; I want the exact lines before deciding.',
    text: 'Let me look at the full output first.',
    calls: [expand],
  };
}
