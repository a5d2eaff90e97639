// When the agent asks the model to summarise its own transcript, compacting that request would
// destroy what it is about to summarise, and advertising expand there makes the summariser emit a
// tool call. Such a turn is treated as bypassed.
import { messageText, type Message } from '@context-guru/components';

const PHRASES = ['Your task is to create a detailed summary of the ', 'First, reason in your scratchpad. Then, generate the '];

export function isAgentCompaction(messages: readonly Message[]): boolean {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') return false;
  const text = messageText(last) ?? (Array.isArray(last.content) ? JSON.stringify(last.content) : '');
  return PHRASES.some((p) => text.includes(p));
}
