// The expand loop's Gemini side. A generateContent answer's first candidate holds the model's
// content; its context_guru_expand calls are `functionCall` parts so named. The continuation
// appends that content (its raw bytes when the answer arrived whole: thought parts and
// thoughtSignature go back exactly as received) and one user content with a `functionResponse`
// per call to the request's `contents`. A call without an `id` (the API gives none on most
// models) is answered by name and position, as Gemini pairs them.
import { EXPAND_TOOL_NAME } from '@context-guru/components';
import type { ExpandResult, ModelTurn } from './expand.types';
import { field, isObject, parseJson, str, type JsonObject } from './json-shape';
import { appendToArray, locate } from './raw-json';
import { sumUsageJson } from './usage';

/** The call id of a functionCall without one: its place among the content's parts. */
const SYNTHETIC = 'gemini:';

export function isExpandPart(part: unknown): boolean {
  return field(field(part, 'functionCall'), 'name') === EXPAND_TOOL_NAME;
}

/** The first candidate's content of an answer (or of one stream chunk). */
function candidateContent(response: unknown): JsonObject | undefined {
  const candidates = field(response, 'candidates');
  const content = Array.isArray(candidates) ? field(candidates[0], 'content') : undefined;
  return isObject(content) ? content : undefined;
}

export function contentParts(response: unknown): unknown[] {
  const parts = field(candidateContent(response), 'parts');
  return Array.isArray(parts) ? parts : [];
}

/** Function calls among the first candidate's parts: ours and the client's. */
export function geminiEntries(response: unknown): Array<{ name: string | undefined; callId: string; id: string }> {
  return contentParts(response).flatMap((part, k) => {
    const fc = field(part, 'functionCall');
    if (!isObject(fc)) return [];
    const own = str(fc['id']);
    const args = fc['args'];
    return [
      { name: str(fc['name']), callId: own !== undefined && own !== '' ? own : `${SYNTHETIC}${k}`, id: str(field(args, 'id')) ?? '' },
    ];
  });
}

/** One call's answer: a functionResponse part naming the tool (and the call's id when it had one). */
function geminiResultPart(r: Pick<ExpandResult, 'callId' | 'text'>): string {
  const id = r.callId.startsWith(SYNTHETIC) ? {} : { id: r.callId };
  return JSON.stringify({ functionResponse: { ...id, name: EXPAND_TOOL_NAME, response: { output: r.text } } });
}

/** The model's content as the provider sent it (raw bytes when the turn arrived as JSON text). */
function modelContent(turn: ModelTurn): string | null {
  if (turn.raw !== undefined) {
    const span = locate(turn.raw, ['candidates', 0, 'content']);
    if (span && turn.raw[span.start] === '{') return turn.raw.slice(span.start, span.end);
  }
  const content = candidateContent(turn.json);
  return content ? JSON.stringify({ ...content, role: 'model' }) : null;
}

/** The contents a continuation appends: the model's content, then one user content of responses. */
function geminiContinuationItems(turn: ModelTurn, results: readonly ExpandResult[]): string[] | null {
  if (results.length === 0) return null;
  const content = modelContent(turn);
  return content ? [content, `{"role":"user","parts":[${results.map(geminiResultPart).join(',')}]}`] : null;
}

export function buildGeminiContinuation(requestRaw: string, turn: ModelTurn, results: readonly ExpandResult[]): string | null {
  const items = geminiContinuationItems(turn, results);
  return items ? appendToArray(requestRaw, ['contents'], items) : null;
}

/**
 * Every round's parts in order without the expand calls, the last round's candidate fields
 * (finishReason…), usageMetadata summed over the rounds.
 */
export function mergeGemini(turns: readonly JsonObject[]): JsonObject {
  const last = turns[turns.length - 1] ?? {};
  const parts = turns.flatMap(contentParts).filter((p) => !isExpandPart(p));
  const candidates = Array.isArray(last['candidates']) ? (last['candidates'] as unknown[]) : [];
  const first = isObject(candidates[0]) ? candidates[0] : {};
  const content = { ...(candidateContent(last) ?? { role: 'model' }), parts };
  const out: JsonObject = { ...last, candidates: [{ ...first, content }, ...candidates.slice(1)] };
  if (turns.some((t) => isObject(t['usageMetadata'])))
    out['usageMetadata'] = turns.reduce<JsonObject>((acc, t) => sumUsageJson(acc, t['usageMetadata']), {});
  return out;
}

/** A stream chunk's JSON, when it is an object. */
export function chunkJson(data: string): JsonObject | undefined {
  const json = parseJson(data);
  return isObject(json) ? json : undefined;
}
