// Real agent sessions (bench/corpus-real/): trajectories that real models produced in public
// agent harnesses, converted to both dialects by scripts/import-real-trajectories.ts and listed,
// with their public source and licence, in bench/corpus-real/index.json. Each file holds, per
// dialect, the request's fixed part (`base`: model, tools, system), the conversation's messages,
// and `requestEnds`: the client's request t sends messages[0, requestEnds[t-1]). The model's answer
// to request t is the assistant message that follows, so output tokens are the recorded ones.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { countTokens, type Dialect } from '@context-guru/components';
import type { SessionSpec } from './billing-replay';
import { toGeminiBody } from './gemini-body';
import { toResponsesBody } from './responses-body';

type Json = Record<string, unknown>;

export const REAL_CORPUS_DIR = join(__dirname, 'corpus-real');

/** A fact a later turn relies on: it must stay visible in what the gateway forwards, or one expand away. */
export interface RealNeedle {
  id: string;
  text: string;
  description: string;
  firstToolOutput: number;
  toolCallId: string;
  inNewest3: boolean;
}

interface DialectSession {
  base: Json;
  messages: Json[];
  requestEnds: number[];
}

export interface RealSession {
  id: string;
  kind: string;
  title: string;
  description: string;
  finalQuestion: string;
  needles: RealNeedle[];
  stats: { requests: number; toolCalls: number; toolOutputChars: number };
  formats: Record<Exclude<Dialect, 'responses'>, DialectSession>;
}

interface RealIndexEntry {
  id: string;
  file: string;
  bytes: number;
  sha256: string;
  requests: number;
}

interface RealIndex {
  trajectories: RealIndexEntry[];
}

/** Every session index.json lists, each checked against its recorded size and digest. */
export function realCorpus(dir = REAL_CORPUS_DIR): RealSession[] {
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as RealIndex;
  return index.trajectories.map((entry) => loadEntry(dir, entry));
}

function loadEntry(dir: string, entry: RealIndexEntry): RealSession {
  const bytes = readFileSync(join(dir, entry.file));
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (bytes.length !== entry.bytes || digest !== entry.sha256) {
    throw new Error(
      `real corpus: ${entry.file} is ${bytes.length} bytes with sha256 ${digest}, but index.json records ` +
        `${entry.bytes} bytes and ${entry.sha256}; re-run scripts/import-real-trajectories.ts or restore the file`,
    );
  }
  const session = JSON.parse(bytes.toString('utf8')) as RealSession;
  for (const dialect of ['anthropic', 'openai'] as const) {
    const f = session.formats[dialect];
    if (f.requestEnds.length !== entry.requests || f.requestEnds.some((end) => end < 1 || end > f.messages.length)) {
      throw new Error(`real corpus: ${entry.file} (${dialect}) has request ends outside its ${f.messages.length} messages`);
    }
  }
  return session;
}

/** The newest block of the last message with Claude Code's moving breakpoint, on copies only. */
function withNewestBreakpoint(messages: Json[]): Json[] {
  const out = messages.slice();
  const last = out[out.length - 1];
  if (!last) return out;
  const content = last.content;
  const blocks: Json[] = Array.isArray(content) ? (content as Json[]).slice() : [{ type: 'text', text: content }];
  blocks[blocks.length - 1] = { ...blocks[blocks.length - 1], cache_control: { type: 'ephemeral' } };
  out[out.length - 1] = { ...last, content: blocks };
  return out;
}

/** The client's request t (1-based) in one dialect: Anthropic as Claude Code marks it, OpenAI as sent. */
export function realRequest(session: RealSession, dialect: Exclude<Dialect, 'responses'>, t: number): Json {
  const f = session.formats[dialect];
  const messages = f.messages.slice(0, f.requestEnds[t - 1]);
  return { ...f.base, messages: dialect === 'anthropic' ? withNewestBreakpoint(messages) : messages };
}

/** Tokens of the recorded answer to request t (the assistant message after it); 40 past the end. */
function answerTokens(session: RealSession, dialect: Exclude<Dialect, 'responses'>, t: number): number {
  const f = session.formats[dialect];
  const next = f.messages[f.requestEnds[t - 1] ?? f.messages.length];
  if (!next || next.role !== 'assistant') return 40;
  return countTokens(JSON.stringify({ content: next.content, tool_calls: next.tool_calls }));
}

function realSessionSpec(session: RealSession): SessionSpec {
  return {
    name: session.id,
    turns: session.stats.requests,
    // A Responses / Gemini session is the OpenAI one as Codex / Gemini CLI sends it (bench/responses-body.ts, gemini-body.ts).
    body: (dialect, t) => {
      if (dialect === 'responses') return toResponsesBody(realRequest(session, 'openai', t));
      if (dialect === 'gemini') return toGeminiBody(realRequest(session, 'openai', t));
      return realRequest(session, dialect, t);
    },
    output: (t) => answerTokens(session, 'openai', t),
    needles: session.needles.map((n) => n.text),
  };
}

export const realSessions = (dir?: string): SessionSpec[] => realCorpus(dir).map(realSessionSpec);
