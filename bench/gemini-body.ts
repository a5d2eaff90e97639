// A chat-completions session turned into the generateContent session Gemini CLI would send for it:
// the system prompt as `systemInstruction`, user messages as user contents, each assistant turn
// as a model content (its text, then its calls as functionCall parts without ids, as Gemini models
// send them, the first part carrying a thoughtSignature fixed for its position, so later turns
// repeat its bytes), the tool messages answering a turn as one user content of functionResponse
// parts `{name, response: {output}}`, and the tools as one tool of functionDeclarations with
// `parametersJsonSchema`. So every corpus session replays as a Gemini session too
// (npm run bench -- billing, the replay gate).
import { isObj, text } from './responses-body';

type Json = Record<string, unknown>;

function args(raw: unknown): Json {
  if (typeof raw !== 'string') return {};
  try {
    const v: unknown = JSON.parse(raw);
    return isObj(v) ? v : { input: v };
  } catch {
    return { input: raw };
  }
}

function declaration(t: unknown): Json | undefined {
  if (!isObj(t) || !isObj(t.function)) return undefined;
  const { name, description, parameters } = t.function;
  return { name, description, parametersJsonSchema: parameters ?? { type: 'object' } };
}

function modelContent(m: Json, k: number, names: Map<string, string>): Json {
  const parts: Json[] = [];
  const said = text(m.content);
  if (said) parts.push({ text: said });
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls.filter(isObj) : []) {
    const fn = isObj(c.function) ? c.function : {};
    const name = typeof fn.name === 'string' ? fn.name : 'unknown';
    if (typeof c.id === 'string') names.set(c.id, name);
    parts.push({ functionCall: { name, args: args(fn.arguments) } });
  }
  if (!parts.length) parts.push({ text: '' });
  parts[0] = { ...parts[0], thoughtSignature: `CiQB${Buffer.from(`turn ${k}`).toString('base64')}` };
  return { role: 'model', parts };
}

export function toGeminiBody(chat: Json): Json {
  const messages = Array.isArray(chat.messages) ? chat.messages.filter(isObj) : [];
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => text(m.content));
  const names = new Map<string, string>();
  const contents: Json[] = [];
  let answers: Json[] | undefined;
  messages.forEach((m, k) => {
    if (m.role !== 'tool') answers = undefined;
    if (m.role === 'user') contents.push({ role: 'user', parts: [{ text: text(m.content) }] });
    else if (m.role === 'assistant') contents.push(modelContent(m, k, names));
    else if (m.role === 'tool') {
      const id = typeof m.tool_call_id === 'string' ? m.tool_call_id : '';
      const part = { functionResponse: { name: names.get(id) ?? 'unknown', response: { output: text(m.content) } } };
      if (answers) answers.push(part);
      else contents.push({ role: 'user', parts: (answers = [part]) });
    }
  });
  const body: Json = { contents, systemInstruction: { role: 'user', parts: [{ text: system.join('\n\n') }] } };
  const declared = Array.isArray(chat.tools) ? chat.tools.map(declaration).filter(isObj) : [];
  if (declared.length) body.tools = [{ functionDeclarations: declared }];
  return { ...body, generationConfig: { temperature: 0, topP: 1, thinkingConfig: { includeThoughts: true } } };
}
