// The expand trail of one answer: what the provider saw of it that the client never did — the
// withheld context_guru_expand calls, their results, and (after in-band rounds) where one client
// message was several provider turns. It is frozen with the session, keyed by the client-visible
// message it belongs to (its anchor), and re-inserted on every later turn that carries that message
// (trail-edits.ts), so the provider keeps seeing exactly what it was shown and the model keeps the
// originals it asked for. Built here from the rounds of one answer; pure data, no I/O.
import { contentKey, type Dialect } from '@context-guru/components';
import { continuationItems, resultItem } from './continuation';
import { isExpandToolCall, isExpandToolUse, openAiMessage } from './expand-calls';
import { field, isObject, parseJson, str } from './json-shape';
import type { AnswerRound, ExpandResult, Trail, TrailRound } from './expand.types';

/** The component name trails are frozen under (a pseudo component: no pipeline component has it). */
export const TRAIL_COMPONENT = 'expand_trail';
const VERSION = 1;

/** What identifies a block the client saw and echoes back (never fields a client may re-serialise differently). */
function blockIdentity(b: unknown): string {
  const type = str(field(b, 'type')) ?? '';
  switch (type) {
    case 'text':
      return `t:${str(field(b, 'text')) ?? ''}`;
    case 'thinking':
      return `th:${str(field(b, 'signature')) ?? str(field(b, 'thinking')) ?? ''}`;
    case 'redacted_thinking':
      return `r:${str(field(b, 'data')) ?? ''}`;
    case 'tool_use':
    case 'server_tool_use':
      return `u:${str(field(b, 'id')) ?? ''}`;
    default:
      return `?:${type}`;
  }
}

/** The text the client sees of an OpenAI message's content (a string or text parts). */
export function openAiText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (field(p, 'type') === 'text' ? (str(field(p, 'text')) ?? '') : '')).join('');
}

function anchorOf(dialect: Dialect, identity: readonly string[]): string {
  return contentKey(JSON.stringify([`${TRAIL_COMPONENT}/${dialect}`, ...identity]));
}

/** The anchor key of an assistant message as a request carries it (null: not an assistant message). */
export function messageAnchor(dialect: Dialect, message: unknown): string | null {
  if (!isObject(message) || message['role'] !== 'assistant') return null;
  if (dialect === 'anthropic') {
    const content = message['content'];
    return Array.isArray(content) ? anchorOf(dialect, content.map(blockIdentity)) : null;
  }
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
  return anchorOf(dialect, [`c:${openAiText(message['content'])}`, ...calls.map((c) => `u:${str(field(c, 'id')) ?? ''}`)]);
}

/**
 * One round from its entries (Anthropic content blocks, OpenAI tool calls): the expand calls with
 * where they sat among the visible entries, and their results — for every round but the last,
 * the very strings its continuation sent (continuation.ts), since the provider cached those.
 */
function roundOf(dialect: Dialect, round: AnswerRound, entries: readonly unknown[], last: boolean, text?: string): TrailRound | null {
  const isExpand = dialect === 'anthropic' ? isExpandToolUse : isExpandToolCall;
  const out: TrailRound = { visible: 0, calls: [], results: [], ...(text === undefined ? {} : { text }) };
  for (const e of entries) {
    if (isExpand(e)) out.calls.push({ at: out.visible, json: JSON.stringify(e) });
    else out.visible++;
  }
  if (
    !answered(
      round.results,
      entries.filter(isExpand).map((e) => str(field(e, 'id'))),
    )
  )
    return null;
  if (last) return { ...out, results: round.results.map(resultItem(dialect)) };
  const items = continuationItems(dialect, round.turn, round.results);
  if (!items) return null;
  // Anthropic: one user message of results; OpenAI: the assistant message, then one tool message per call.
  const [message, ...rest] = items;
  if (message === undefined) return null;
  if (dialect === 'openai') return { ...out, message, results: rest };
  const [results] = rest;
  return results === undefined ? null : { ...out, results: [results] };
}

function entriesOf(dialect: Dialect, round: AnswerRound, last: boolean): TrailRound | null {
  if (dialect === 'anthropic') {
    const content = field(round.turn.json, 'content');
    return Array.isArray(content) ? roundOf(dialect, round, content, last) : null;
  }
  const message = openAiMessage(round.turn.json);
  if (!message) return null;
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
  return roundOf(dialect, round, calls, last, openAiText(message['content']));
}

/** Every withheld call has an id and exactly its result, in call order. */
function answered(results: readonly ExpandResult[], ids: ReadonlyArray<string | undefined>): boolean {
  return ids.length === results.length && ids.every((id, k) => id !== undefined && id !== '' && results[k]?.callId === id);
}

/**
 * The trail of an answer given as its rounds (each continuation's turn, and the last round the
 * client answers itself). Null when nothing was withheld from the client, or when a round is not
 * the shape the re-insertion needs (then nothing is frozen and later turns carry the client's bytes).
 */
export function buildTrail(dialect: Dialect, rounds: readonly AnswerRound[]): Trail | null {
  const final = rounds.at(-1);
  if (!final) return null;
  const built: TrailRound[] = [];
  for (const given of rounds) {
    const last = given === final;
    const round = entriesOf(dialect, given, last);
    if (!round || (!last && round.calls.length === 0)) return null;
    built.push(round);
  }
  if (built.every((r) => r.calls.length === 0)) return null;
  const identity =
    dialect === 'anthropic'
      ? rounds.flatMap((r) => (field(r.turn.json, 'content') as unknown[]).filter((b) => !isExpandToolUse(b)).map(blockIdentity))
      : [
          `c:${built.map((r) => r.text ?? '').join('')}`,
          ...((openAiMessage(final.turn.json)?.['tool_calls'] as unknown[] | undefined) ?? [])
            .filter((c) => !isExpandToolCall(c))
            .map((c) => `u:${str(field(c, 'id')) ?? ''}`),
        ];
  return { v: VERSION, dialect, anchor: anchorOf(dialect, identity), rounds: built };
}

/** A stored trail read back; null for anything that is not one this code wrote. */
export function parseTrail(text: string): Trail | null {
  const t = parseJson(text);
  if (!isObject(t) || t['v'] !== VERSION || !Array.isArray(t['rounds']) || typeof t['anchor'] !== 'string') return null;
  if (t['dialect'] !== 'anthropic' && t['dialect'] !== 'openai') return null;
  return t as unknown as Trail;
}
