// A non-streaming answer after expand rounds, as one response: the content of every round in
// order (the model's preamble before its expand call included) without any context_guru_expand
// call, the last round's stop reason, and the usage of every round summed.
import { itemAt } from '@context-guru/components';
import {
  type Dialect,
  isExpandToolCall,
  isExpandToolUse,
  openAiMessage,
  field,
  isObject,
  str,
  type JsonObject,
  mergeResponses,
  mergeGemini,
  sumUsageJson,
} from '@context-guru/engine';

function summedUsage(turns: readonly JsonObject[]): JsonObject | undefined {
  if (!turns.some((t) => isObject(t['usage']))) return undefined;
  return turns.reduce<JsonObject>((acc, t) => sumUsageJson(acc, t['usage']), {});
}

function mergeAnthropic(turns: readonly JsonObject[]): JsonObject {
  const last = turns[turns.length - 1];
  const content = turns.flatMap((t) => (Array.isArray(t['content']) ? (t['content'] as unknown[]) : [])).filter((b) => !isExpandToolUse(b));
  const out: JsonObject = { ...last, content };
  const clientTools = content.some((b) => field(b, 'type') === 'tool_use');
  if (out['stop_reason'] === 'tool_use' && !clientTools) out['stop_reason'] = 'end_turn';
  const usage = summedUsage(turns);
  if (usage) out['usage'] = usage;
  return out;
}

function mergeOpenAi(turns: readonly JsonObject[]): JsonObject {
  const last = itemAt(turns, turns.length - 1, 'last turn (the loop pushes one before merging)');
  const choices = Array.isArray(last['choices']) ? (last['choices'] as unknown[]) : [];
  const choice: JsonObject = isObject(choices[0]) ? { ...choices[0] } : { index: 0 };
  const message: JsonObject = { ...(openAiMessage(last) ?? { role: 'assistant' }) };
  const texts = turns.map((t) => str(openAiMessage(t)?.['content'])).filter((s): s is string => s !== undefined && s !== '');
  message['content'] = texts.length ? texts.join('') : null;
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]).filter((c) => !isExpandToolCall(c)) : [];
  if (calls.length) message['tool_calls'] = calls;
  else delete message['tool_calls'];
  choice['message'] = message;
  if (choice['finish_reason'] === 'tool_calls' && calls.length === 0) choice['finish_reason'] = 'stop';
  const out: JsonObject = { ...last, choices: [choice, ...choices.slice(1)] };
  const usage = summedUsage(turns);
  if (usage) out['usage'] = usage;
  return out;
}

export function mergeTurns(dialect: Dialect, turns: readonly JsonObject[]): JsonObject {
  if (dialect === 'responses') return mergeResponses(turns);
  if (dialect === 'gemini') return mergeGemini(turns);
  return dialect === 'anthropic' ? mergeAnthropic(turns) : mergeOpenAi(turns);
}
