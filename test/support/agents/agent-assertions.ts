// What the agent tier reads back out of a scenario: the steps and verdict as the CLI saw them,
// the expand exchanges the provider saw, and the two provider-side properties every forwarded
// request must keep (a valid shape, and no byte of an already forwarded prefix changed).
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import type { RecordedRequest } from '../fake-upstream';
import { canonical, promptSegments } from '../prompt-cache';
import { contentText, readConversation } from './agent-conversation';
import { EXPAND_TOOL } from './coding-script';
import { isMainLoop } from './agent-provider';
import { TASK_HEAD, type Scenario } from './agent-scenario';
import { plannedFrom } from '../planned-rewrite';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function transcriptBlocks(s: Scenario, role: 'assistant' | 'user'): Obj[] {
  const out: Obj[] = [];
  for (const e of s.run.events) {
    const message = e.type === role && isObj(e.message) ? e.message : undefined;
    if (message && Array.isArray(message.content)) out.push(...message.content.filter(isObj));
  }
  return out;
}

/** Codex's `exec --json` events: each finished item (a command it ran, a message it wrote). */
function codexItems(s: Scenario, type: string): Obj[] {
  return s.run.events.flatMap((e) => (e.type === 'item.completed' && isObj(e.item) && e.item.type === type ? [e.item] : []));
}

/** Tool names the CLI executed, in order, from its stream-json transcript. */
export function clientSteps(s: Scenario): string[] {
  // Codex runs every action as a command: its shell tool is the one it executes.
  if (s.kind === 'codex') return codexItems(s, 'command_execution').map(() => s.tools.shell);
  return transcriptBlocks(s, 'assistant')
    .filter((b) => b.type === 'tool_use')
    .map((b) => String(b.name));
}

/**
 * The VERDICT line of the run's final answer as the CLI reports it. Through the gateway the
 * answer may open with the preamble the model wrote before an expand call (one stitched message).
 */
export function finalVerdict(s: Scenario): string {
  const result = s.run.events.find((e) => e.type === 'result');
  const codexText = s.kind === 'codex' ? codexItems(s, 'agent_message').at(-1)?.text : undefined;
  const text = typeof codexText === 'string' ? codexText : result && typeof result.result === 'string' ? result.result : '';
  const at = text.indexOf('VERDICT:');
  return at < 0 ? text : text.slice(at);
}

export const UNKNOWN_TOOL_MESSAGES = [/No such tool available/, /not found in registry/];

/** Tool results in which the CLI refused a call to a tool it does not have. */
export function unknownToolRefusals(s: Scenario): string[] {
  return transcriptBlocks(s, 'user')
    .filter((b) => b.type === 'tool_result')
    .map((b) => contentText(b.content))
    .filter((text) => UNKNOWN_TOOL_MESSAGES.some((re) => re.test(text)));
}

export function mainLoop(s: Scenario, reqs: RecordedRequest[]): RecordedRequest[] {
  return reqs.filter((r) => isMainLoop(r, s.tools, TASK_HEAD));
}

/** Violations the forwarded body has that the client's own body does not (both validated). */
export function addedShapeViolations(forwarded: RecordedRequest, client: RecordedRequest | undefined): string[] {
  const own = new Set(client ? validateProviderShape(client.dialect, client.body) : []);
  return validateProviderShape(forwarded.dialect, forwarded.body).filter((v) => !own.has(v));
}

/** The ids of the client tool results a body carries (expand results excluded): pairs a forwarded request with the client request it came from. */
function resultKey(req: RecordedRequest): string {
  const c = readConversation(req);
  const ids = c.rounds.flatMap((r) => r.calls.filter((x) => x.name !== EXPAND_TOOL && r.results.has(x.id)).map((x) => x.id));
  return ids.sort().join(',');
}

export function clientOf<R extends RecordedRequest>(forwarded: RecordedRequest, client: R[]): R | undefined {
  const key = resultKey(forwarded);
  return client.find((c) => c.method === 'POST' && resultKey(c) === key);
}

const listOf = (r: RecordedRequest): unknown => (r.dialect === 'responses' ? r.body.input : r.body.messages);
const messagesOf = (r: RecordedRequest): string[] => {
  const list = listOf(r);
  return Array.isArray(list) ? list.map(canonical) : [];
};

/** Every reasoning item a request carries, as its exact JSON (Responses: encrypted_content included). */
export function reasoningItems(r: RecordedRequest): string[] {
  const list = listOf(r);
  return Array.isArray(list) ? list.filter((i) => isObj(i) && i.type === 'reasoning').map((i) => JSON.stringify(i)) : [];
}
const headOf = (r: RecordedRequest): string =>
  promptSegments(r.dialect, r.body)
    .filter((x) => x.kind !== 'message')
    .map((x) => x.text)
    .join('\u0000');

/** First index where `next` no longer carries `prev`'s message unchanged (shorter counts), or -1. */

function firstChange(prev: string[], next: string[]): number {
  for (let i = 0; i < prev.length; i++) if (prev[i] !== next[i]) return i;
  return -1;
}

/**
 * Every way the gateway changed, between two consecutive forwarded main-loop requests, something
 * it had already forwarded and the client had not changed itself: the head (tools, system) or a
 * message up to where the client's own history first changed (all of it when the client only
 * appended). Messages compare as JSON without cache_control, the provider's cache identity. A
 * change from exactly the message a planned rewrite announced for that client turn
 * (`x-context-guru-rewrite: planned; from=<i>`, docs/cache.md) is counted under `planned`.
 */
export function prefixChanges(
  forwarded: RecordedRequest[],
  client: Array<RecordedRequest & { rewrite?: string }>,
  expanded: ReadonlySet<string> = new Set(),
): { head: string[]; messages: string[]; unmasked: string[]; planned: string[] } {
  const out = { head: [] as string[], messages: [] as string[], unmasked: [] as string[], planned: [] as string[] };
  for (let k = 1; k < forwarded.length; k++) {
    const [fp, fn] = [forwarded[k - 1]!, forwarded[k]!];
    const [cp, cn] = [clientOf(fp, client), clientOf(fn, client)];
    if (!cp || !cn) {
      out.messages.push(`forwarded request ${k}: no client request carries the same tool results`);
      continue;
    }
    if (headOf(cp) === headOf(cn) && headOf(fp) !== headOf(fn))
      out.head.push(`forwarded request ${k}: tools or system changed (the client kept them)`);
    const clientChange = firstChange(messagesOf(cp), messagesOf(cn));
    const kept = clientChange === -1 ? messagesOf(fp).length : clientChange;
    const [prev, next, own] = [messagesOf(fp), messagesOf(fn), messagesOf(cn)];
    for (let i = 0; i < kept; i++) {
      if (prev[i] === next[i]) continue;
      // The one deliberate rewrite (docs/cache.md): a message whose marker the model expanded goes
      // back to the client's own bytes on the next turn.
      const unmask = next[i] === own[i] && [...(prev[i] ?? '').matchAll(/<<cg:([A-Za-z0-9_-]{1,64})>>/g)].some((m) => expanded.has(m[1]!));
      if (unmask) out.unmasked.push(`forwarded request ${k}: messages[${i}]`);
      else if (plannedFrom(cn.rewrite) === i) {
        out.planned.push(`forwarded request ${k}: from messages[${i}]`);
        break;
      } else {
        out.messages.push(`forwarded request ${k}: messages[${i}] changed (the client kept messages[0..${kept - 1}])`);
        break;
      }
    }
  }
  return out;
}

/**
 * The first forwarded request of each client turn: what the gateway sent for the client's body,
 * without the continuation requests of its own expand rounds (those carry the same client results).
 */
export function turnRequests(forwarded: RecordedRequest[]): RecordedRequest[] {
  const seen = new Set<string>();
  return forwarded.filter((r) => {
    const key = resultKey(r);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export interface ExpandExchange {
  /** The marker hash the call named (bare, or stripped of `<<cg:` / `>>`). */
  hash: string;
  /** The tool result the provider received for the call. */
  result: string;
}

/** Every expand call the provider saw answered, deduplicated by call id. */
export function expandExchanges(forwarded: RecordedRequest[]): ExpandExchange[] {
  const seen = new Map<string, ExpandExchange>();
  for (const r of forwarded) {
    for (const round of readConversation(r).rounds) {
      for (const c of round.calls) {
        const result = round.results.get(c.id);
        if (c.name !== EXPAND_TOOL || result === undefined || seen.has(c.id)) continue;
        seen.set(c.id, {
          hash: String(c.args.id ?? '')
            .trim()
            .replace(/^<<cg:|>>$/g, ''),
          result,
        });
      }
    }
  }
  return [...seen.values()];
}

/** Tool results that reached the provider carrying a marker, by marker hash: where each was first seen. */
export function markedResults(forwarded: RecordedRequest[]): Map<string, { r: RecordedRequest; callId: string }> {
  const out = new Map<string, { r: RecordedRequest; callId: string }>();
  for (const r of forwarded) {
    for (const round of readConversation(r).rounds) {
      for (const c of round.calls) {
        const text = c.name === EXPAND_TOOL ? undefined : round.results.get(c.id);
        for (const m of text?.matchAll(/<<cg:([A-Za-z0-9_-]{1,64})>>/g) ?? []) if (!out.has(m[1]!)) out.set(m[1]!, { r, callId: c.id });
      }
    }
  }
  return out;
}
