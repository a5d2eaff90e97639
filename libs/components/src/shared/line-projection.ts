// The deterministic line projection behind extract: keep what the task can need (head/tail
// context, keyword lines, error lines) and say exactly how many lines each gap hid, so the model
// knows where to look when it expands. Kept lines are the original lines, never edited.
import type { Message } from '../component';
import { keywords, longKeywords, mentionedKeys } from './keywords';
import { messageText } from './message-text';
import { countTokens } from './tokens';
import { textMemo } from './text-memo';

/** Words that mark a line as evidence of something going wrong, whatever the query is. */
const ERROR_LINE =
  /error|fail|exception|panic|fatal|traceback|denied|timeout|timed out|refused|abort|segmentation fault|unauthori[sz]ed|forbidden|not found/i;

/** String values of a call's JSON arguments (keys like "command" are not intent); raw if not JSON. */
function argumentText(raw: string): string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return raw;
  }
  const out: string[] = [];
  // An explicit stack, not recursion: arguments are the model's text and may nest arbitrarily.
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') out.push(v);
    else if (typeof v === 'object' && v !== null) {
      const kids = Array.isArray(v) ? v : Object.values(v);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
  }
  return out.join(' ');
}

function textOf(m: Message): string {
  const parts = [messageText(m) ?? ''];
  for (const call of m.tool_calls ?? []) parts.push(argumentText(call.arguments));
  return parts.join('\n');
}

/**
 * The relevance signal: the task (first user turn) plus the most recent user turn and the most
 * recent assistant turn, including the arguments of the calls it made — an agent's intent often
 * lives only in a call like `grep -n "timeout" app.log`.
 */
export function queryContext(messages: readonly Message[]): string {
  return queryMessages(messages).map(textOf).join('\n');
}

/** The picked messages in transcript order, each once. */
function queryMessages(messages: readonly Message[]): Message[] {
  const picked = new Set<number>();
  const first = messages.findIndex((m) => m.role === 'user');
  if (first >= 0) picked.add(first);
  for (const role of ['user', 'assistant'] as const) {
    const last = messages.findLastIndex((m) => m.role === role);
    if (last >= 0) picked.add(last);
  }
  return messages.filter((_, i) => picked.has(i));
}

const pieceKeywords = textMemo(keywords, 16 * 1024 * 1024);

/**
 * keywords(queryContext(messages)), from each piece's memoised keywords: no keyword or marker spans
 * a line break, so the pieces' sets joined in order are the joined text's set, in the same order.
 * The task and an output re-read every turn are tokenized once, not on every turn of the session.
 */
export function queryKeywords(messages: readonly Message[]): Set<string> {
  const out = new Set<string>();
  for (const m of queryMessages(messages)) {
    for (const piece of [messageText(m) ?? '', ...(m.tool_calls ?? []).map((c) => argumentText(c.arguments))]) {
      for (const w of pieceKeywords(piece)) out.add(w);
    }
  }
  return out;
}

function omittedLine(n: number): string {
  return `… (${n} lines omitted)`;
}

/**
 * Projects `text` onto its relevant lines. A keyword found on more than half of the lines (a
 * logger name, a hostname the task also mentions) tells no line apart from another, so it is
 * ignored for this output. Returns null when nothing would be omitted or the projection is not
 * smaller than the input.
 */
export function projectLines(text: string, keys: ReadonlySet<string>, head: number, tail: number): string | null {
  // A pure function of its arguments: every session that meets this output with the same
  // keywords gets the projection the first one computed.
  const asked = `${head},${tail}\u0000${[...keys].join(' ')}`;
  let byKeys = projections.get(text);
  const hit = byKeys?.get(asked);
  if (hit !== undefined) return hit;
  const projected = projectUncached(text, keys, head, tail);
  if (!byKeys) {
    if (projectionChars + text.length > PROJECTION_MEMO_CHARS) {
      projections.clear();
      projectionChars = 0;
    }
    projections.set(text, (byKeys = new Map()));
    projectionChars += text.length;
  }
  if (byKeys.size >= PROJECTIONS_PER_TEXT) byKeys.clear();
  byKeys.set(asked, projected);
  return projected;
}

/** Outputs (by text) → keyword sets asked (head, tail and keywords as one string) → projection. */
const projections = new Map<string, Map<string, string | null>>();
let projectionChars = 0;
const PROJECTION_MEMO_CHARS = 8 * 1024 * 1024;
const PROJECTIONS_PER_TEXT = 8;

function projectUncached(text: string, keys: ReadonlySet<string>, head: number, tail: number): string | null {
  const lines = text.split('\n');
  const long = longKeywords(keys);
  const scanned = lines.map((line) => ({ line, hits: mentionedKeys(line, keys, long) }));
  const freq = new Map<string, number>();
  for (const { hits } of scanned) for (const k of hits) freq.set(k, (freq.get(k) ?? 0) + 1);
  const telling = (k: string) => (freq.get(k) ?? 0) * 2 <= lines.length;
  const out: string[] = [];
  let omitted = 0;
  let lastOmitted = '';
  const closeGap = () => {
    // A one-line gap is cheaper to keep than to describe.
    if (omitted === 1) out.push(lastOmitted);
    else if (omitted > 1) out.push(omittedLine(omitted));
    omitted = 0;
  };
  scanned.forEach(({ line, hits }, i) => {
    if (i < head || i >= lines.length - tail || ERROR_LINE.test(line) || hits.some(telling)) {
      closeGap();
      out.push(line);
    } else {
      omitted++;
      lastOmitted = line;
    }
  });
  closeGap();
  if (out.length === lines.length) return null;
  const projected = out.join('\n');
  return countTokens(projected) < countTokens(text) ? projected : null;
}
