// The scripted model (scripted-model.ts) on the Responses API: it reads a forwarded `input` as it
// reads messages — the newest user text, the first marker, the outputs of its own expand calls —
// and answers with a Responses JSON body.
import { callItem, responseJson, textItem } from './responses-fixtures';
import type { ScriptedReply } from './fake-upstream';
import type { ModelTurn } from './scripted-model';

type Item = Record<string, unknown>;
const EXPAND = 'context_guru_expand';
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/;
const isItem = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A message item's text (string content or its text parts). */
function messageText(item: Item): string {
  const c = item.content;
  if (typeof c === 'string') return c;
  return Array.isArray(c) ? c.map((p) => (isItem(p) && typeof p.text === 'string' ? p.text : '')).join('') : '';
}

/** A tool output's text (a string, or the input_text parts of an array). */
function outputText(o: unknown): string {
  if (typeof o === 'string') return o;
  return Array.isArray(o) ? o.map((p) => (isItem(p) && p.type === 'input_text' ? String(p.text) : '')).join('') : '';
}

export function readResponsesTurn(body: Item, advertised: boolean): ModelTurn {
  const input = body.input;
  const items: unknown[] = Array.isArray(input) ? input : typeof input === 'string' ? [{ role: 'user', content: input }] : [];
  const expandIds = new Set<unknown>();
  const expandResults: string[] = [];
  let markerId: string | undefined;
  let lastUserText = '';
  for (const item of items) {
    if (!isItem(item)) continue;
    const type = typeof item.type === 'string' ? item.type : 'message';
    if (type === 'function_call' && item.name === EXPAND) expandIds.add(item.call_id);
    if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const text = outputText(item.output);
      if (expandIds.has(item.call_id)) expandResults.push(text);
      markerId ??= MARKER.exec(text)?.[1];
    }
    if (type !== 'message') continue;
    const text = messageText(item);
    markerId ??= MARKER.exec(text)?.[1];
    if (item.role === 'user' && text) lastUserText = text;
  }
  return { expandResults, markerId, lastUserText, advertised };
}

/** A whole response: the text as an assistant message, or one call of the expand tool for `markerId`. */
export function responsesJson(text: string, expandFor?: string): ScriptedReply {
  const item = expandFor ? callItem('fc_expand_1', 'call_expand_1', EXPAND, JSON.stringify({ id: expandFor })) : textItem('msg_fake', text);
  return { kind: 'json', body: responseJson('resp_fake', [item]) };
}
