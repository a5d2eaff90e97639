// Gemini generateContent in tests: Gemini-CLI-shaped request bodies (systemInstruction, a context
// user content, per step a model content with a thought part, a signed text and a functionCall
// without an id, answered by a functionResponse `{output}`; declarations with parametersJsonSchema
// beside a built-in tool), and a scripted provider's answers, whole or as the SSE stream
// (`data: {…}\r\n\r\n` chunks, usageMetadata on every chunk, finishReason on the last).
import type { AgentStep } from './transcripts';
import { SYSTEM, TASK } from './transcripts';

export const GEMINI_MODEL = 'gemini-2.5-pro';

/** A thought signature as the API sends one: opaque base64 the gateway must return byte for byte. */
const signature = (n: number): string => `CiQB0e2Kb${'+/Zm9v'.repeat(6)}${n}==`;

const GEMINI_TOOLS = [
  {
    functionDeclarations: ['read_file', 'bash', 'http_get'].map((name) => ({
      name,
      description: `The ${name} tool.`,
      parametersJsonSchema: { type: 'object', properties: { arg: { type: 'string' } } },
    })),
  },
];

/** The model content of step `i`: a thought, a signed preamble and the call. */
export function modelStep(s: AgentStep, i: number): Record<string, unknown> {
  return {
    role: 'model',
    parts: [
      { text: `**Planning step ${i}**`, thought: true },
      { text: `Step ${i}: calling ${s.tool}.`, thoughtSignature: signature(i) },
      { functionCall: { name: s.tool, args: s.args } },
    ],
  };
}

/** The body of turn `upto` (steps before it answered), with anything in `extra` merged in. */
export function geminiTurn(steps: AgentStep[], upto: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const contents: Array<Record<string, unknown>> = [
    { role: 'user', parts: [{ text: 'This is the Gemini CLI. We are setting up the context for our chat.' }, { text: TASK }] },
  ];
  steps.slice(0, upto).forEach((s, i) => {
    contents.push(modelStep(s, i));
    contents.push({ role: 'user', parts: [{ functionResponse: { name: s.tool, response: { output: s.output } } }] });
  });
  return {
    contents,
    systemInstruction: { role: 'user', parts: [{ text: SYSTEM }] },
    tools: GEMINI_TOOLS,
    generationConfig: { temperature: 0, topP: 1, thinkingConfig: { includeThoughts: true, thinkingBudget: -1 } },
    futureField: { kept: [1, { nested: true }] },
    ...extra,
  };
}

export interface GeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
}

export const USAGE: GeminiUsage = {
  promptTokenCount: 1200,
  cachedContentTokenCount: 1000,
  candidatesTokenCount: 30,
  thoughtsTokenCount: 12,
  totalTokenCount: 1242,
};

/** A whole generateContent answer with `parts`. */
export function geminiJson(parts: unknown[], usage: GeminiUsage = USAGE): Record<string, unknown> {
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage,
    modelVersion: GEMINI_MODEL,
    responseId: 'resp-gemini-1',
  };
}

/** The same answer as SSE: one chunk per part, the last carrying finishReason; usage on each. */
export function geminiSse(parts: unknown[], usage: GeminiUsage = USAGE): string {
  return parts
    .map((part, k) => {
      const last = k === parts.length - 1;
      const candidate = { content: { parts: [part], role: 'model' }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 };
      const chunkUsage = last ? usage : { ...usage, candidatesTokenCount: k + 1, totalTokenCount: usage.promptTokenCount + k + 1 };
      return `data: ${JSON.stringify({ candidates: [candidate], usageMetadata: chunkUsage, modelVersion: GEMINI_MODEL, responseId: 'resp-gemini-1' })}\r\n\r\n`;
    })
    .join('');
}

/** The chunks a client got from an SSE body. */
export function sseChunks(text: string): Array<Record<string, unknown>> {
  return text
    .split(/\r?\n\r?\n/)
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice('data: '.length)) as Record<string, unknown>);
}

/** Every part of every chunk's first candidate, in order. */
export function chunkParts(chunks: ReadonlyArray<Record<string, unknown>>): Array<Record<string, unknown>> {
  return chunks.flatMap((c) => {
    const candidates = c.candidates as Array<{ content?: { parts?: Array<Record<string, unknown>> } }> | undefined;
    return candidates?.[0]?.content?.parts ?? [];
  });
}
