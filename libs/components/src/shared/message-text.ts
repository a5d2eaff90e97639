// Reading and writing a message's text. A message is "rewritable" only when all of its content
// is text: rewriting it as one string would otherwise drop images, documents or tool_use blocks.
import type { Message } from '../component';

/** The full text of a rewritable message, or null when it carries non-text blocks. */
export function messageText(m: Message): string | null {
  const c = m.content;
  if (typeof c === 'string') return c;
  if (c === null || c === undefined) return '';
  let out = '';
  for (const b of c) {
    if (b.type !== 'text' || typeof b.text !== 'string') return null;
    out += b.text;
  }
  return out;
}

export function isToolOutput(m: Message): boolean {
  return m.role === 'tool';
}

export function setText(m: Message, text: string): void {
  m.content = text;
}

/** A tool output and where it sits in the message list. */
export interface ToolOutput {
  readonly i: number;
  readonly m: Message;
}

/** The tool outputs, oldest first, each with its index (so no caller re-reads `messages[i]`). */
export function toolOutputs(messages: readonly Message[]): ToolOutput[] {
  const out: ToolOutput[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'tool') out.push({ i, m });
  });
  return out;
}

/** The text of user-role messages joined, first user turn first: the task signal. */
export function userTexts(messages: readonly Message[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const t = messageText(m);
    if (t) out.push(t);
  }
  return out;
}
