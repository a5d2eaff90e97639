// The provider refuses a request with more than 4 prompt-cache breakpoints across system + tools +
// messages, so every place the provider counts one is counted here, from the parsed body.

// The cap is the provider's; cacheinject budgets against the same constant.
export { MAX_BREAKPOINTS } from '@context-guru/components';
import { isObject } from '@context-guru/components';

/** Object-valued `cache_control` plus object-valued `cachePoint` (Bedrock spelling) on one carrier. */
function carried(v: unknown): number {
  if (!isObject(v)) return 0;
  return (isObject(v.cache_control) ? 1 : 0) + (isObject(v.cachePoint) ? 1 : 0);
}

function eachCarried(list: unknown): number {
  if (!Array.isArray(list)) return 0;
  let n = 0;
  for (const item of list) n += carried(item);
  return n;
}

/**
 * Counts system[] elements, tools[] elements, message-level keys, content blocks and — beyond the
 * original, which missed them — the content elements nested in a tool_result, which the provider
 * counts too.
 */
export function countBreakpoints(body: Record<string, unknown>): number {
  let n = eachCarried(body.system) + eachCarried(body.tools);
  const messages = body.messages;
  if (!Array.isArray(messages)) return n;
  for (const m of messages) if (isObject(m)) n += messageBreakpoints(m);
  return n;
}

/**
 * Per parsed message, memoised by the object: a warm turn's body reuses the previous turn's parsed
 * messages for its shared prefix (a parsed body is never written to), so only new ones are walked.
 */
const byMessage = new WeakMap<object, number>();

function messageBreakpoints(m: Record<string, unknown>): number {
  let n = byMessage.get(m);
  if (n !== undefined) return n;
  n = carried(m);
  if (Array.isArray(m.content)) {
    for (const block of m.content) {
      n += carried(block);
      if (isObject(block) && block.type === 'tool_result') n += eachCarried(block.content);
    }
  }
  byMessage.set(m, n);
  return n;
}
