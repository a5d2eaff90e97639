// A chat-completions session turned into the Responses API session a Codex-like client would send
// for it: the system prompt as `instructions`, each message as an item (text parts as input_text /
// output_text), each assistant turn led by a reasoning item with encrypted_content (fixed for its
// position, so later turns repeat its bytes), tool calls as function_call items and tool messages
// as function_call_output items, tools flattened to Responses function tools. So every corpus
// trajectory replays as a Responses session too (npm run bench -- billing, the replay gate).
type Json = Record<string, unknown>;

export const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A chat message's content as text (also for bench/gemini-body.ts). */
export function text(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

function tool(t: unknown): unknown {
  if (!isObj(t) || !isObj(t.function)) return t;
  const { name, description, parameters } = t.function;
  return { type: 'function', name, description, parameters, strict: false };
}

function assistantItems(m: Json, k: number): Json[] {
  const items: Json[] = [
    { type: 'reasoning', id: `rs_${k}`, summary: [], encrypted_content: `gAAAAB${Buffer.from(`turn ${k}`).toString('base64')}` },
  ];
  const said = text(m.content);
  if (said) items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: said }] });
  for (const c of Array.isArray(m.tool_calls) ? m.tool_calls.filter(isObj) : []) {
    const fn = isObj(c.function) ? c.function : {};
    items.push({ type: 'function_call', call_id: c.id, name: fn.name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '{}' });
  }
  return items;
}

export function toResponsesBody(chat: Json): Json {
  const messages = Array.isArray(chat.messages) ? chat.messages.filter(isObj) : [];
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => text(m.content));
  const input: Json[] = [];
  messages.forEach((m, k) => {
    if (m.role === 'user') input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: text(m.content) }] });
    else if (m.role === 'assistant') input.push(...assistantItems(m, k));
    else if (m.role === 'tool') input.push({ type: 'function_call_output', call_id: m.tool_call_id, output: text(m.content) });
  });
  const body: Json = { model: chat.model, instructions: system.join('\n\n'), input };
  if (Array.isArray(chat.tools)) body.tools = chat.tools.map(tool);
  return { ...body, tool_choice: 'auto', store: false, include: ['reasoning.encrypted_content'], stream: false };
}
