// When the agent asks the model to summarise its own transcript, compacting that request would
// destroy what it is about to summarise, and advertising expand there makes the summariser emit a
// tool call. Such a turn is treated as bypassed.
import { messageText, type Message } from '@context-guru/components';

const PHRASES = ['Your task is to create a detailed summary of the ', 'First, reason in your scratchpad. Then, generate the '];

function userText(m: Message): string {
  return messageText(m) ?? (Array.isArray(m.content) ? JSON.stringify(m.content) : '');
}

/**
 * The summarisation request is the agent's own text in its last message. On Anthropic that message
 * may also carry tool_result blocks, which normalize to tool messages around the user text, so the
 * trailing tool messages are looked past — but never an assistant turn, and never tool output
 * itself (an agent reading a file that quotes the phrase is not compacting).
 */
export function isAgentCompaction(messages: readonly Message[]): boolean {
  const m = messages.findLast((x) => x.role !== 'tool');
  return m?.role === 'user' && PHRASES.some((p) => userText(m).includes(p));
}
