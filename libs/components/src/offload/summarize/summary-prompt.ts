// The summarizer's request, grounded in the current task: the task and the latest user turn are
// given as "summarize toward this", the trajectory follows as `[role]` blocks (tool outputs masked
// unless include_tool_calls), and a roll-forward starts from the previous summary instead of
// re-reading what it already covers.
import type { Message } from '../../component';
import type { ModelRequest } from '../../ports/model.port';

export type SummaryLevel = 'concise' | 'regular' | 'highly_detailed';

const MAX_TRAJECTORY_CHARS = 280_000;
const MAX_TASK_CHARS = 8_000;
const MAX_LATEST_CHARS = 2_000;
const MAX_CALL_ARGS_CHARS = 500;
/** @internal exported for tests */
export const MASKED = '<masked_tool_output>';

const LEVEL: Record<SummaryLevel, { words: string; maxTokens: number }> = {
  concise: { words: 'Be brief: at most about 150 words, only what the next step needs.', maxTokens: 1024 },
  regular: { words: 'Aim for 200–500 words.', maxTokens: 2048 },
  highly_detailed: {
    words: 'Be thorough: keep file paths, commands, identifiers, error messages and values verbatim; up to about 1500 words.',
    maxTokens: 4096,
  },
};

const SYSTEM = `You condense the earlier part of an AI agent's working session so the agent can continue its task with a shorter context.
Write a faithful summary of the trajectory you are given, oriented toward the current task:
- what has been done and found (files read or changed, commands run and their outcomes, errors seen and their causes),
- decisions made and why, approaches that failed,
- the current state and what remains to be done.
Never invent facts; keep exact names, paths and values. Do not address the user and do not continue the task yourself.
Reply with the summary inside <summary>…</summary>.`;

function blockText(m: Message): string {
  if (typeof m.content === 'string') return m.content;
  if (!Array.isArray(m.content)) return '';
  return m.content.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : `[${b.type}]`)).join('\n');
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)} […]` : text;
}

function render(m: Message, includeTools: boolean): string {
  if (m.role === 'tool') return `[tool result]\n${includeTools ? blockText(m) : MASKED}`;
  const parts = [`[${m.role}]`];
  const text = blockText(m);
  if (text) parts.push(text);
  for (const c of m.tool_calls ?? []) parts.push(`[tool call ${c.name}] ${clip(c.arguments, MAX_CALL_ARGS_CHARS)}`);
  return parts.join('\n');
}

export interface SummaryInput {
  messages: readonly Message[];
  /** Trajectory range the model reads: the whole span, or only what a previous summary does not cover. */
  from: number;
  to: number;
  previous?: string;
  level: SummaryLevel;
  includeToolCalls: boolean;
  model?: string;
}

export function buildSummaryRequest(s: SummaryInput): ModelRequest {
  const task = s.messages.find((m) => m.role === 'user');
  const latest = [...s.messages].reverse().find((m) => m.role === 'user' && m !== task);
  let trajectory = '';
  for (const m of s.messages.slice(s.from, s.to)) trajectory += `${render(m, s.includeToolCalls)}\n\n`;
  // The newest part matters most: an over-long trajectory loses its beginning.
  if (trajectory.length > MAX_TRAJECTORY_CHARS) trajectory = `[…earlier part omitted…]\n${trajectory.slice(-MAX_TRAJECTORY_CHARS)}`;
  const sections = [`## Current task\n${clip(task ? blockText(task) : '(unknown)', MAX_TASK_CHARS)}`];
  if (latest) sections.push(`## Latest user turn (for orientation only)\n${clip(blockText(latest), MAX_LATEST_CHARS)}`);
  if (s.previous)
    sections.push(
      `## Summary of the session before this trajectory\n${s.previous}\n\nMerge it with the trajectory below into one updated summary.`,
    );
  sections.push(
    `## Trajectory to summarize${s.includeToolCalls ? '' : ` (tool outputs are masked as ${MASKED})`}\n${trajectory.trimEnd()}`,
  );
  sections.push(LEVEL[s.level].words);
  return { system: SYSTEM, prompt: sections.join('\n\n'), maxTokens: LEVEL[s.level].maxTokens, purpose: 'summarize', model: s.model };
}

/** The summary inside <summary> tags (or the whole reply when the model left them out); null if unusable. */
export function parseSummary(reply: { text: string; truncated: boolean }): string | null {
  if (reply.truncated) return null;
  const tagged = /<summary>([\s\S]*?)<\/summary>/i.exec(reply.text);
  const body = (tagged?.[1] ?? reply.text.replace(/<\/?summary>/gi, '')).trim();
  return body.length ? body : null;
}

/** The one message that replaces the span; `token` is the marker + hint (or sentinel, or nothing). */
export function summaryMessageText(summary: string, count: number, token: string): string {
  return [
    '=== History Summary ===',
    `The earlier part of this session (${count} messages) was condensed into this summary.`,
    `<summary>\n${summary}\n</summary>`,
    `Continue the task from here; do not re-summarize.${token ? ` ${token}` : ''}`,
  ].join('\n');
}
