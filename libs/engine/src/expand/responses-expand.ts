// The expand loop's Responses API side. A response's `output` is a list of items: the model's
// context_guru_expand calls are `function_call` items named so, and the continuation appends the
// response's output items (their raw bytes: reasoning with encrypted_content goes back exactly as
// received) and one `function_call_output` per call to the request's `input`. With store:true and
// previous_response_id the same holds: the continuation keeps the client's previous_response_id
// and carries the new items itself, so it never depends on the provider having stored this answer.
import { EXPAND_TOOL_NAME } from '@context-guru/components';
import { field, isObject, parseJson, str, type JsonObject } from './json-shape';
import { appendToArray, locate } from './raw-json';
import { elements } from '../wire/json-scan';
import { sumUsageJson } from './usage';
import type { ExpandResult, ModelTurn } from './expand.types';

export interface ResponsesEntry {
  name: string | undefined;
  callId: string | undefined;
  id: string;
}

/** Ours: a top-level function call by that name (a call into a client's namespace tool is the client's). */
export function isExpandItem(item: unknown): boolean {
  return field(item, 'type') === 'function_call' && field(item, 'name') === EXPAND_TOOL_NAME && field(item, 'namespace') === undefined;
}

/** A call's tool name, qualified by its namespace when it has one (never the bare expand name then). */
function callName(item: unknown): string | undefined {
  const name = str(field(item, 'name'));
  const ns = str(field(item, 'namespace'));
  return ns !== undefined && name !== undefined ? `${ns}.${name}` : name;
}

/** Tool calls among a response's output items: function calls (ours or the client's) and custom tool calls. */
export function responsesEntries(response: unknown): ResponsesEntry[] {
  const output = field(response, 'output');
  if (!Array.isArray(output)) return [];
  return output
    .filter((item) => field(item, 'type') === 'function_call' || field(item, 'type') === 'custom_tool_call')
    .map((item) => {
      const isFunction = field(item, 'type') === 'function_call';
      const args = isFunction ? parseJson(str(field(item, 'arguments')) ?? '') : undefined;
      return {
        name: isFunction ? callName(item) : undefined,
        callId: str(field(item, 'call_id')),
        id: str(field(args, 'id')) ?? '',
      };
    });
}

/** The output items as the provider sent them (raw bytes when the turn arrived as JSON text). */
export function outputItems(turn: ModelTurn): string[] | null {
  if (turn.raw !== undefined) {
    const span = locate(turn.raw, ['output']);
    if (span && turn.raw[span.start] === '[') {
      const raw = turn.raw;
      return elements(raw, span.start).map((e) => raw.slice(e.start, e.end));
    }
  }
  const output = field(turn.json, 'output');
  return Array.isArray(output) ? output.map((item) => JSON.stringify(item)) : null;
}

export function responsesResultItem(r: Pick<ExpandResult, 'callId' | 'text'>): string {
  return JSON.stringify({ type: 'function_call_output', call_id: r.callId, output: r.text });
}

/** The items a continuation appends to `input`: the answer's output items, then one output per call. */
function responsesContinuationItems(turn: ModelTurn, results: readonly ExpandResult[]): string[] | null {
  if (results.length === 0) return null;
  const items = outputItems(turn);
  return items ? [...items, ...results.map(responsesResultItem)] : null;
}

export function buildResponsesContinuation(requestRaw: string, turn: ModelTurn, results: readonly ExpandResult[]): string | null {
  const items = responsesContinuationItems(turn, results);
  return items ? appendToArray(requestRaw, ['input'], items) : null;
}

/** Every round's output items in order without the expand calls, the last round's status and ids, usage summed. */
export function mergeResponses(turns: readonly JsonObject[]): JsonObject {
  const last = turns[turns.length - 1] ?? {};
  const output = turns.flatMap((t) => (Array.isArray(t['output']) ? (t['output'] as unknown[]) : [])).filter((i) => !isExpandItem(i));
  const out: JsonObject = { ...last, output };
  if (turns.some((t) => isObject(t['usage']))) out['usage'] = turns.reduce<JsonObject>((acc, t) => sumUsageJson(acc, t['usage']), {});
  return out;
}
