// What the provider would refuse with a 400, checked on every body the gateway emits in tests:
// roles and their order, system placement, tool call/result pairing and the breakpoint cap.
// Violations are sentences naming the message index, so a failing test says what broke.
import { countBreakpoints, MAX_BREAKPOINTS } from './breakpoints';
import { isObject } from '@context-guru/components';
import { validateResponses } from './responses-shape';
import { validateGemini } from './gemini-shape';
import type { Dialect } from './wire.types';

type Obj = Record<string, unknown>;

function blocksOf(m: Obj): Obj[] {
  return Array.isArray(m.content) ? m.content.filter(isObject) : [];
}

function checkAnthropicTools(tools: unknown, out: string[]): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) return void out.push('tools: must be an array');
  tools.forEach((t, i) => {
    if (!isObject(t) || typeof t.name !== 'string' || t.name === '') return void out.push(`tools[${i}]: missing name`);
    // Server / client-defined tools (bash_20250124, web_search_…) carry a versioned type instead of a schema.
    const custom = t.type === undefined || t.type === 'custom';
    if (custom && !isObject(t.input_schema)) out.push(`tools[${i}] "${t.name}": missing input_schema`);
  });
}

function checkAnthropicSystem(system: unknown, out: string[]): void {
  if (system === undefined || typeof system === 'string') return;
  if (!Array.isArray(system) || !system.every((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string')) {
    out.push('system: must be a string or an array of text blocks');
  }
}

function anthropicContent(m: Obj, i: number, last: boolean, out: string[]): void {
  const c = m.content;
  const emptyOk = last && m.role === 'assistant';
  if (typeof c === 'string') {
    if (c === '' && !emptyOk) out.push(`messages[${i}]: empty content`);
    return;
  }
  if (!Array.isArray(c)) return void out.push(`messages[${i}]: content must be a string or an array of blocks`);
  if (c.length === 0 && !emptyOk) out.push(`messages[${i}]: empty content`);
  c.forEach((b, k) => {
    if (!isObject(b) || typeof b.type !== 'string') return void out.push(`messages[${i}].content[${k}]: block without a type`);
    if (b.type === 'tool_use' && m.role !== 'assistant') out.push(`messages[${i}].content[${k}]: tool_use outside an assistant message`);
    if (b.type === 'tool_result' && m.role !== 'user') out.push(`messages[${i}].content[${k}]: tool_result outside a user message`);
  });
}

function anthropicPairing(list: Obj[], out: string[]): void {
  const seen = new Set<string>();
  list.forEach((m, i) => {
    if (m.role === 'assistant') {
      const next = list[i + 1];
      const answers = next && next.role === 'user' ? blocksOf(next).filter((b) => b.type === 'tool_result') : [];
      for (const b of blocksOf(m).filter((x) => x.type === 'tool_use')) {
        const id = String(b.id);
        if (seen.has(id)) out.push(`messages[${i}]: duplicate tool_use id "${id}"`);
        seen.add(id);
        const n = answers.filter((r) => r.tool_use_id === id).length;
        if (n !== 1) out.push(`messages[${i}]: tool_use "${id}" has ${n} tool_result blocks in messages[${i + 1}] (exactly 1 required)`);
      }
    }
    if (m.role === 'user') {
      const prev = list[i - 1];
      const calls = new Set(
        prev && prev.role === 'assistant'
          ? blocksOf(prev)
              .filter((b) => b.type === 'tool_use')
              .map((b) => b.id)
          : [],
      );
      for (const r of blocksOf(m).filter((b) => b.type === 'tool_result')) {
        if (!calls.has(r.tool_use_id))
          out.push(`messages[${i}]: tool_result "${String(r.tool_use_id)}" has no matching tool_use in messages[${i - 1}]`);
      }
    }
  });
}

function validateAnthropic(body: Obj, out: string[]): void {
  const list = body.messages as unknown[];
  list.forEach((m, i) => {
    if (!isObject(m)) return void out.push(`messages[${i}]: not an object`);
    if (m.role === 'system')
      out.push(`messages[${i}]: role "system" inside messages (the system prompt belongs in the top-level system field)`);
    else if (m.role !== 'user' && m.role !== 'assistant') out.push(`messages[${i}]: invalid role ${JSON.stringify(m.role)}`);
    anthropicContent(m, i, i === list.length - 1, out);
    if (i === 0 && m.role !== 'user') out.push(`messages[0]: first message must have role "user", got ${JSON.stringify(m.role)}`);
    const prev = list[i - 1];
    if (i > 0 && isObject(prev) && prev.role === m.role)
      out.push(`messages[${i}]: role "${String(m.role)}" follows the same role (roles must alternate)`);
  });
  anthropicPairing(list.filter(isObject), out);
  checkAnthropicSystem(body.system, out);
  checkAnthropicTools(body.tools, out);
  const bp = countBreakpoints(body);
  if (bp > MAX_BREAKPOINTS) out.push(`${bp} cache breakpoints across system, tools and messages (at most ${MAX_BREAKPOINTS})`);
}

const OPENAI_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

function validateOpenAI(body: Obj, out: string[]): void {
  const list = body.messages as unknown[];
  // Calls of the latest assistant message still waiting for their tool message.
  let pending = new Map<string, number>();
  let answered = new Set<string>();
  const flush = (): void => {
    for (const [id, at] of pending) if (!answered.has(id)) out.push(`messages[${at}]: tool_call "${id}" has no tool message answering it`);
    pending = new Map();
    answered = new Set();
  };
  list.forEach((m, i) => {
    if (!isObject(m)) return void out.push(`messages[${i}]: not an object`);
    if (typeof m.role !== 'string' || !OPENAI_ROLES.has(m.role))
      return void out.push(`messages[${i}]: invalid role ${JSON.stringify(m.role)}`);
    if (m.role === 'tool') {
      const id = m.tool_call_id;
      if (typeof id !== 'string') out.push(`messages[${i}]: tool message without tool_call_id`);
      else if (!pending.has(id)) out.push(`messages[${i}]: tool message "${id}" does not answer a preceding tool_call`);
      else if (answered.has(id)) out.push(`messages[${i}]: tool_call "${id}" answered more than once`);
      else answered.add(id);
      return;
    }
    flush();
    if (m.tool_calls === undefined) return;
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls))
      return void out.push(`messages[${i}]: tool_calls only belong on an assistant message, as an array`);
    for (const c of m.tool_calls) {
      const fn = isObject(c) ? c.function : undefined;
      if (!isObject(c) || typeof c.id !== 'string' || !isObject(fn) || typeof fn.name !== 'string') {
        out.push(`messages[${i}]: malformed tool_call`);
        continue;
      }
      if (pending.has(c.id)) out.push(`messages[${i}]: duplicate tool_call id "${c.id}"`);
      pending.set(c.id, i);
    }
  });
  flush();
}

/** [] when the provider would accept the body's shape; otherwise one sentence per violation. */
export function validateProviderShape(dialect: Dialect, body: unknown): string[] {
  if (!isObject(body)) return ['body: not a JSON object'];
  if (dialect === 'responses') return validateResponses(body);
  if (dialect === 'gemini') return validateGemini(body);
  if (!Array.isArray(body.messages)) return ['messages: missing or not an array'];
  if (body.messages.length === 0) return ['messages: empty'];
  const out: string[] = [];
  if (dialect === 'anthropic') validateAnthropic(body, out);
  else validateOpenAI(body, out);
  return out;
}
