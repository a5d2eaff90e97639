// What the cheap model is asked for: one filter program specific to this output and this task.
// It sees the output itself (bounded), so it can name the exact lines, records and fields to drop;
// the program then runs on the full text in the sandbox.
import type { ModelRequest } from '../../ports/model.port';

/** Output shown to the model; the program itself runs on the whole text. */
const MAX_SHOWN_CHARS = 32_000;
/** Task context shown to the model (the most recent part is kept). */
const MAX_CONTEXT_CHARS = 8_000;
const CODE_MAX_TOKENS = 4096;

const DELETE_ONLY = `- DELETE ONLY. The result must be obtainable from INPUT by deleting characters: every character you keep stays byte-for-byte identical and in its original order. Never add, reword, reorder or summarize, and never insert notes, ellipses or counts. (A check enforces this; a program that adds text is discarded.)
- For JSON input: JSON.parse(INPUT), drop array elements and object keys the task does not need (never change a kept value), and return JSON.stringify(result).`;

const REWRITE = `- You may condense or rewrite to keep what the task needs (the original stays retrievable), but the result must be strictly shorter and must not invent facts.`;

function systemPrompt(rewrite: boolean): string {
  return `You write a small JavaScript filter program that reduces one tool output to what the current task needs.
Rules:
- The program is the body of a function and runs in a sandbox with no I/O: no require, import, fetch, process, timers or network.
- The global string INPUT holds the full tool output. \`return\` the filtered string (or assign it to OUTPUT).
${rewrite ? REWRITE : DELETE_ONLY}
- Keep what the task can need: lines or records naming the task's files, identifiers and keywords; errors, failures, warnings and stack frames; final status and summary lines. Delete progress noise, repeated lines, passing-test chatter, banners and records or fields irrelevant to the task. Trimming words or parts within a line is allowed.
- JavaScript regular expressions work; for patterns over long text prefer these linear-time helpers (RE2 syntax; ^ and $ match at line boundaries; no lookaround or backreferences):
  re_sub(pattern, replacement, text) -> string ($1 inserts group 1)
  re_findall(pattern, text) -> array of matches (group 1 with one group, group arrays with several)
  re_split(pattern, text) -> array of strings
  re_match(pattern, text) -> [match, ...groups] of the first match, or null
  Plain string methods (split('\\n'), includes, indexOf, startsWith, slice, trim, toLowerCase) and JSON work.
- Limits: 2 seconds and 32 MiB. Prefer simple loops over lines.
Reply with exactly one \`\`\`javascript fenced block and nothing else.`;
}

/** A fence longer than any backtick run inside the text, so the output cannot close it early. */
function fenceFor(text: string): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function shown(text: string): { body: string; note: string } {
  if (text.length <= MAX_SHOWN_CHARS) return { body: text, note: '' };
  const head = text.slice(0, (MAX_SHOWN_CHARS * 3) / 4);
  const tail = text.slice(text.length - MAX_SHOWN_CHARS / 4);
  const hidden = text.length - head.length - tail.length;
  return {
    body: `${head}\n[… ${hidden} characters not shown here; the program receives them …]\n${tail}`,
    note: ` — shown in part; INPUT holds all ${text.length} characters`,
  };
}

export function buildCodeRequest(output: string, context: string, rewrite: boolean, model?: string): ModelRequest {
  const ctxText = context.length > MAX_CONTEXT_CHARS ? context.slice(context.length - MAX_CONTEXT_CHARS) : context;
  const { body, note } = shown(output);
  const fence = fenceFor(body);
  const lines = output.split('\n').length;
  const prompt = `## Current task (conversation context)
${ctxText.trim() || '(none)'}

## Tool output (${output.length} characters, ${lines} lines${note})
${fence}
${body}
${fence}

Write the filter program for this output.`;
  return { system: systemPrompt(rewrite), prompt, maxTokens: CODE_MAX_TOKENS, purpose: 'extract', model };
}

const FENCED = /(`{3,})[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)\n?\1(?!`)/g;

/**
 * The program inside the reply's fenced block: the first one labelled as JavaScript, else the
 * first fenced block. Null when the reply has no complete fenced block (e.g. cut by max_tokens).
 */
export function codeFromReply(reply: string): string | null {
  let first: string | null = null;
  for (const m of reply.matchAll(FENCED)) {
    // Both groups always take part in a match (possibly empty); the guard only satisfies the type.
    const [, , lang = '', code] = m;
    if (code === undefined || !code.trim()) continue;
    if (lang.toLowerCase() === 'javascript' || lang.toLowerCase() === 'js') return code;
    first ??= code;
  }
  return first;
}
