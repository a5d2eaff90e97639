// A deterministic fake model. Its answer depends only on the newest user text, so a transcript
// compressed by the gateway must get exactly the answer the uncompressed one gets. When asked to,
// it redeems the first marker it sees through context_guru_expand and then answers with the
// SHA-256 of what the tool gave back — proof that the original reached the model intact.
import { createHash } from 'node:crypto';
import type { RecordedRequest, ScriptedReply } from './fake-upstream';
import { readResponsesTurn, responsesJson } from './responses-model';

const EXPAND = 'context_guru_expand';
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;

export const sha = (s: string) => createHash('sha256').update(s).digest('hex');

interface AnyMsg {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b: { type?: string; text?: string; content?: unknown }) =>
      b.type === 'text' ? (b.text ?? '') : b.type === 'tool_result' ? textOf(b.content) : '',
    )
    .join('');
}

export interface ModelTurn {
  /** Expand-tool results this request carries (id → text), newest last. */
  expandResults: string[];
  markerId?: string;
  lastUserText: string;
  advertised: boolean;
}

type AnyBlock = { type: string; id?: string; name?: string; tool_use_id?: string; content?: unknown };

/** Collects the results of expand calls this message answers (ids of the calls seen so far in `ids`). */
function collectExpandResults(dialect: RecordedRequest['dialect'], m: AnyMsg, ids: Set<string>, results: string[]): void {
  if (dialect === 'openai') {
    for (const c of m.tool_calls ?? []) if (c.function.name === EXPAND) ids.add(c.id);
    if (m.role === 'tool' && m.tool_call_id && ids.has(m.tool_call_id)) results.push(textOf(m.content));
    return;
  }
  if (!Array.isArray(m.content)) return;
  for (const b of m.content as AnyBlock[]) {
    if (b.type === 'tool_use' && b.name === EXPAND && b.id) ids.add(b.id);
    if (b.type === 'tool_result' && b.tool_use_id && ids.has(b.tool_use_id)) results.push(textOf(b.content));
  }
}

/** A user message that is only tool results carries no new text from the user. */
const onlyToolResults = (m: AnyMsg): boolean =>
  Array.isArray(m.content) && (m.content as AnyBlock[]).every((b) => b.type === 'tool_result');

export function readTurn(req: RecordedRequest): ModelTurn {
  const messages = (req.body.messages ?? []) as AnyMsg[];
  const tools = (req.body.tools ?? []) as Array<{ name?: string; function?: { name: string } }>;
  const advertised = tools.some((t) => t.name === EXPAND || t.function?.name === EXPAND);
  if (req.dialect === 'responses') return readResponsesTurn(req.body, advertised);
  const expandIds = new Set<string>();
  const expandResults: string[] = [];
  let markerId: string | undefined;
  let lastUserText = '';
  for (const m of messages) {
    collectExpandResults(req.dialect, m, expandIds, expandResults);
    const t = textOf(m.content);
    markerId ??= MARKER.exec(t)?.[1];
    if (m.role === 'user' && !onlyToolResults(m) && t) lastUserText = t;
  }
  return { expandResults, markerId, lastUserText, advertised };
}

export function answerText(turn: ModelTurn): string {
  if (turn.expandResults.length) return `expanded sha256=${sha(turn.expandResults[turn.expandResults.length - 1]!)}`;
  return `answer to ${sha(turn.lastUserText).slice(0, 12)}`;
}

export function openaiJson(text: string, toolCall?: { id: string; name: string; args: string }): ScriptedReply {
  const message: Record<string, unknown> = { role: 'assistant', content: toolCall ? null : text, refusal: null };
  if (toolCall) message.tool_calls = [{ id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: toolCall.args } }];
  return {
    kind: 'json',
    body: {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-fake',
      choices: [{ index: 0, message, finish_reason: toolCall ? 'tool_calls' : 'stop', logprobs: null }],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, prompt_tokens_details: { cached_tokens: 40 } },
    },
  };
}

export function anthropicJson(text: string, toolUse?: { id: string; name: string; input: unknown }): ScriptedReply {
  return {
    kind: 'json',
    body: {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: 'claude-fake',
      content: toolUse ? [{ type: 'tool_use', id: toolUse.id, name: toolUse.name, input: toolUse.input }] : [{ type: 'text', text }],
      stop_reason: toolUse ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 60, cache_read_input_tokens: 40, cache_creation_input_tokens: 0, output_tokens: 10 },
    },
  };
}

/** The non-streaming script: redeem a marker once when `expand` is on, else answer. */
export function jsonScript(opts: { expand: boolean }) {
  return (req: RecordedRequest): ScriptedReply => {
    const turn = readTurn(req);
    const wantExpand = opts.expand && turn.advertised && turn.markerId && turn.expandResults.length === 0;
    if (req.dialect === 'responses') return responsesJson(answerText(turn), wantExpand ? turn.markerId : undefined);
    if (req.dialect === 'openai') {
      return wantExpand
        ? openaiJson('', { id: 'call_expand_1', name: EXPAND, args: JSON.stringify({ id: turn.markerId }) })
        : openaiJson(answerText(turn));
    }
    return wantExpand
      ? anthropicJson('', { id: 'toolu_expand_1', name: EXPAND, input: { id: turn.markerId } })
      : anthropicJson(answerText(turn));
  };
}
