// The expand tool's bytes never vary (fixed key order, fixed text) so the tools prefix stays
// cache-stable across turns; it is only ever appended last, and never twice. Whether a session
// gets it at all is decided once, on its first turn (prepare-request.ts).
import { EXPAND_TOOL_NAME, isObject, type Pipeline } from '@context-guru/components';
import type { Dialect } from './wire.types';

// Sent on every turn of every offering session, so every word is billed each turn: the markers
// themselves say what they are ("[full output: call context_guru_expand]"), the description only
// says what the tool returns and what `id` takes (53 o200k tokens in all for Anthropic, 59 for
// OpenAI; the longer wording before cost 100 and 106).
const EXPAND_DESCRIPTION = 'Returns the original text a <<cg:HASH>> marker replaced. id: the HASH or the whole marker.';

const SCHEMA = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };

const OPENAI_JSON = JSON.stringify({
  type: 'function',
  function: { name: EXPAND_TOOL_NAME, description: EXPAND_DESCRIPTION, parameters: SCHEMA },
});
const ANTHROPIC_JSON = JSON.stringify({ name: EXPAND_TOOL_NAME, description: EXPAND_DESCRIPTION, input_schema: SCHEMA });
// Responses function tools are flat; `strict` defaults to true there, which would require
// additionalProperties:false, so it is stated false (the schema is the same on every route).
const RESPONSES_JSON = JSON.stringify({
  type: 'function',
  name: EXPAND_TOOL_NAME,
  description: EXPAND_DESCRIPTION,
  parameters: SCHEMA,
  strict: false,
});

// A Gemini function declaration (it goes inside a tool's `functionDeclarations`): the schema in
// the API's own OpenAPI subset, whose type names every model version accepts.
const GEMINI_JSON = JSON.stringify({
  name: EXPAND_TOOL_NAME,
  description: EXPAND_DESCRIPTION,
  parameters: { type: 'OBJECT', properties: { id: { type: 'STRING' } }, required: ['id'] },
});

const TOOL_JSON: Record<Dialect, string> = {
  openai: OPENAI_JSON,
  anthropic: ANTHROPIC_JSON,
  responses: RESPONSES_JSON,
  gemini: GEMINI_JSON,
};

export function expandToolJson(dialect: Dialect): string {
  return TOOL_JSON[dialect];
}

/** The declared names of one tools[] entry in any dialect's shape (a Gemini tool declares several). */
function toolNames(tool: unknown): string[] {
  if (!isObject(tool)) return [];
  if (typeof tool.name === 'string') return [tool.name];
  const fn = tool.function;
  if (isObject(fn) && typeof fn.name === 'string') return [fn.name];
  const declared = tool.functionDeclarations;
  return Array.isArray(declared) ? declared.flatMap((d) => (isObject(d) && typeof d.name === 'string' ? [d.name] : [])) : [];
}

export function expandDeclared(tools: unknown): boolean {
  return Array.isArray(tools) && tools.some((t) => toolNames(t).includes(EXPAND_TOOL_NAME));
}

/** Injection is only safe when the caller lets the model pick tools freely. */
export function toolChoiceAllows(dialect: Dialect, choice: unknown): boolean {
  // An absent (or JSON null) tool_choice means the provider default, which is auto.
  if (choice === undefined || choice === null) return true;
  if (dialect !== 'anthropic') return choice === 'auto';
  return isObject(choice) && choice.type === 'auto';
}

/** Offloaders that only act through a model: without one they never leave a marker. */
const MODEL_ONLY = new Set(['summarize']);

/**
 * Whether a pipeline can ever leave a resolvable marker: it has an offloader whose marker_mode is
 * full (the default) — and a model, for one that needs it — and the store keeps originals. Only
 * then is the tool worth its tokens on every turn.
 */
export function pipelineCanEmitMarkers(
  pipeline: Pipeline,
  persistent: boolean,
  options?: Readonly<Record<string, unknown>>,
  hasModel = false,
): boolean {
  if (!persistent) return false;
  return pipeline.components.some((c) => {
    if (c.kind !== 'offload' || (MODEL_ONLY.has(c.name) && !hasModel)) return false;
    const mode = isObject(options?.[c.name]) ? (options[c.name] as Record<string, unknown>).marker_mode : undefined;
    return mode !== 'off' && mode !== 'summary';
  });
}
