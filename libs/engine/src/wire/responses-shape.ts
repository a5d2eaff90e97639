// What the Responses API refuses with a 400, checked on every Responses body the gateway emits in
// tests: item shapes, call ids unique and each call answered exactly once by a later output of its
// kind (outputs may answer calls the provider stored, when the body continues a stored response),
// and tool names unique. Violations are sentences naming the item index.
import { isObject } from '@context-guru/components';
import { itemType } from './responses.wire';

type Obj = Record<string, unknown>;

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);
/** Output type → the call type it answers. */
const ANSWERS: Record<string, string> = { function_call_output: 'function_call', custom_tool_call_output: 'custom_tool_call' };

function checkMessage(item: Obj, at: string, out: string[]): void {
  if (!ROLES.has(String(item.role))) out.push(`${at}: invalid role ${JSON.stringify(item.role)}`);
  const c = item.content;
  if (typeof c === 'string') return;
  if (!Array.isArray(c)) return void out.push(`${at}: content must be a string or an array of parts`);
  c.forEach((p, k) => {
    if (!isObject(p) || typeof p.type !== 'string') out.push(`${at}.content[${k}]: part without a type`);
  });
}

function checkCall(item: Obj, at: string, out: string[]): void {
  if (typeof item.call_id !== 'string' || item.call_id === '') out.push(`${at}: ${String(item.type)} without call_id`);
  if (typeof item.name !== 'string' || item.name === '') out.push(`${at}: ${String(item.type)} without name`);
  const payload = item.type === 'custom_tool_call' ? 'input' : 'arguments';
  if (typeof item[payload] !== 'string') out.push(`${at}: ${String(item.type)} ${payload} must be a string`);
}

function checkOutput(item: Obj, at: string, out: string[]): void {
  if (typeof item.call_id !== 'string') out.push(`${at}: ${String(item.type)} without call_id`);
  const o = item.output;
  if (typeof o === 'string') return;
  if (!Array.isArray(o) || !o.every((p) => isObject(p) && typeof p.type === 'string'))
    out.push(`${at}: ${String(item.type)} output must be a string or an array of typed parts`);
}

function checkItems(items: unknown[], continues: boolean, out: string[]): void {
  const calls = new Map<string, { type: string; at: number; answered: boolean }>();
  items.forEach((raw, i) => {
    const at = `input[${i}]`;
    if (!isObject(raw)) return void out.push(`${at}: not an object`);
    const type = itemType(raw);
    if (type === '') return void out.push(`${at}: item without a type`);
    if (type === 'message') return checkMessage(raw, at, out);
    if (type === 'function_call' || type === 'custom_tool_call') {
      checkCall(raw, at, out);
      const id = String(raw.call_id);
      if (calls.has(id)) out.push(`${at}: duplicate call_id "${id}"`);
      calls.set(id, { type, at: i, answered: false });
      return;
    }
    const answers = ANSWERS[type];
    if (answers) {
      checkOutput(raw, at, out);
      const call = calls.get(String(raw.call_id));
      if (!call) {
        if (!continues) out.push(`${at}: ${type} "${String(raw.call_id)}" answers no ${answers} before it`);
      } else if (call.type !== answers) out.push(`${at}: ${type} answers a ${call.type}`);
      else if (call.answered) out.push(`${at}: call "${String(raw.call_id)}" answered more than once`);
      else call.answered = true;
      return;
    }
    if (type === 'reasoning' && raw.encrypted_content !== undefined && typeof raw.encrypted_content !== 'string')
      out.push(`${at}: reasoning encrypted_content must be a string`);
  });
  for (const [id, c] of calls) if (!c.answered) out.push(`input[${c.at}]: ${c.type} "${id}" has no output answering it`);
}

function checkTools(tools: unknown, out: string[]): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) return void out.push('tools: must be an array');
  const names = new Set<string>();
  tools.forEach((t, i) => {
    if (!isObject(t) || typeof t.type !== 'string') return void out.push(`tools[${i}]: tool without a type`);
    if (t.type !== 'function' && t.type !== 'custom') return;
    if (typeof t.name !== 'string' || t.name === '') return void out.push(`tools[${i}]: ${t.type} tool without a name`);
    if (names.has(t.name)) out.push(`tools[${i}]: duplicate tool name "${t.name}"`);
    names.add(t.name);
    if (t.type === 'function' && t.parameters !== undefined && !isObject(t.parameters))
      out.push(`tools[${i}] "${t.name}": parameters must be an object`);
  });
}

export function validateResponses(body: Obj): string[] {
  const out: string[] = [];
  const input = body.input;
  // A stored response or a conversation holds the calls that outputs in `input` may answer.
  const continues = typeof body.previous_response_id === 'string' || body.conversation !== undefined;
  if (Array.isArray(input)) checkItems(input, continues, out);
  else if (input !== undefined && typeof input !== 'string') out.push('input: must be a string or an array of items');
  if (input === undefined && !continues && body.prompt === undefined) out.push('input: missing');
  checkTools(body.tools, out);
  return out;
}
