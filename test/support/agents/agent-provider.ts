// The scripted provider the real agent CLIs talk to (directly, or through the gateway): answers
// POST /v1/messages and /v1/chat/completions as SSE (JSON when a request does not stream) and
// GET /v1/models, recording every request. The agent's main loop (the request that carries the
// task prompt and the agent's shell tool) follows the coding script; anything else the CLI sends
// on the side (titles, summaries, quota probes, sub-agents) gets a short text answer that never
// touches the script.
import { createHash } from 'node:crypto';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest, type Script, type ScriptedReply } from '../fake-upstream';
import { anthropicSse, openAiSse, SIGNATURE, type AnthropicBlock } from '../fake-upstream-sse';
import { callItem, responseJson, responseSse, textItem } from '../responses-fixtures';
import { readConversation } from './agent-conversation';
import { decide, type AgentTools, type Decision, type ScriptOptions } from './coding-script';
import { cachingScript, type Bill, type PromptCacheSim } from '../prompt-cache';

export const FAKE_MODEL = 'cg-e2e-model';
const SIDE_ANSWER = 'Fix the failing stats suite';

export interface AgentProvider extends FakeUpstream {
  /** Requests of the agent's main loop, in arrival order. */
  mainLoop(): RecordedRequest[];
  /** The decision the script took for each main-loop request, in arrival order. */
  decisions: Decision[];
  /** With a prompt-cache simulator: what it billed each main-loop request. */
  bills: Map<RecordedRequest, Bill>;
}

/** The agent's main loop: its own system prompt, its shell tool, and the task prompt. */
export function isMainLoop(req: RecordedRequest, tools: AgentTools, task: string): boolean {
  if (req.method !== 'POST') return false;
  const c = readConversation(req);
  return tools.system.test(c.systemText) && c.toolNames.includes(tools.shell) && c.firstUserText.includes(task);
}

function anthropicBlocks(d: Decision): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = d.thinking ? [{ type: 'thinking', thinking: d.thinking, signature: SIGNATURE }] : [];
  blocks.push({ type: 'text', text: d.text });
  for (const c of d.calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.args });
  return blocks;
}

/**
 * A Responses answer's items, as a reasoning model gives them: a reasoning item whose
 * encrypted_content the client must send back byte-identical, the text, then the calls.
 */
function responsesItems(d: Decision, h: string): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  if (d.thinking)
    items.push({
      type: 'reasoning',
      id: `rs_${h}`,
      summary: [{ type: 'summary_text', text: d.thinking }],
      encrypted_content: encrypted(d.thinking),
    });
  if (d.text) items.push(textItem(`msg_${h}`, d.text));
  d.calls.forEach((c, n) => items.push(callItem(`fc_${h}${n}`, c.id, c.name, JSON.stringify(c.args))));
  return items;
}

/** Opaque to everyone but the provider: the gateway must forward it exactly as the client sends it. */
function encrypted(thinking: string): string {
  return `gAAAAAB${createHash('sha256').update(thinking).digest('base64')}${Buffer.from(thinking).toString('base64')}`;
}

function jsonReply(req: RecordedRequest, text: string): ScriptedReply {
  if (req.dialect === 'responses') return { kind: 'json', body: responseJson('resp_side', [textItem('msg_side', text)]) };
  if (req.dialect === 'anthropic') {
    return {
      kind: 'json',
      body: {
        id: 'msg_01SideRequestAnswer',
        type: 'message',
        role: 'assistant',
        model: String(req.body.model ?? FAKE_MODEL),
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 120, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 8 },
      },
    };
  }
  return {
    kind: 'json',
    body: {
      id: 'chatcmpl-side',
      object: 'chat.completion',
      created: 1_741_569_952,
      model: FAKE_MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 120, completion_tokens: 8, total_tokens: 128 },
    },
  };
}

/**
 * A message id per distinct answer, as a provider gives: Claude Code folds assistant messages
 * that share an id into one, so a constant id would merge every turn of the loop.
 */
function messageId(dialect: RecordedRequest['dialect'], d: Decision): string {
  const h = createHash('sha256').update(JSON.stringify(d)).digest('base64url').replace(/[-_]/g, 'x').slice(0, 24);
  return dialect === 'anthropic' ? `msg_01${h}` : `chatcmpl-${h}`;
}

const usageOf = (b: Bill) => ({
  input_tokens: b.fresh,
  cache_read_input_tokens: b.cacheRead,
  cache_creation_input_tokens: b.cacheWrite,
  output_tokens: b.output,
});

function reply(req: RecordedRequest, d: Decision, bill?: Bill): ScriptedReply {
  if (req.body.stream !== true) return jsonReply(req, d.text);
  const id = messageId(req.dialect, d);
  if (req.dialect === 'anthropic' && bill) return { kind: 'sse', events: [anthropicSse(anthropicBlocks(d), { id, usage: usageOf(bill) })] };
  if (req.dialect === 'responses') return { kind: 'sse', events: [responseSse(`resp_${id.slice(-24)}`, responsesItems(d, id.slice(-24)))] };
  if (req.dialect === 'anthropic') return { kind: 'sse', events: [anthropicSse(anthropicBlocks(d), { id })] };
  return { kind: 'sse', events: [openAiSse(d.text, d.calls, { id })] };
}

function models(): ScriptedReply {
  return {
    kind: 'json',
    body: { object: 'list', data: [{ id: FAKE_MODEL, object: 'model', created: 1_741_569_952, owned_by: 'context-guru-e2e' }] },
  };
}

/**
 * `front`: a cloud in front of the model (fake-cloud.ts), checking credentials and framing answers.
 * `sim`: every request the model answers is billed by the prompt-cache simulator, its answer's
 * usage saying what was read from and written to the cache.
 */
export async function startAgentProvider(
  o: ScriptOptions,
  task: string,
  front: (s: Script) => Script = (s) => s,
  sim?: PromptCacheSim,
): Promise<AgentProvider> {
  const decisions: Decision[] = [];
  const main = new Set<RecordedRequest>();
  const bills = new Map<RecordedRequest, Bill>();
  const model = (req: RecordedRequest, bill?: Bill): ScriptedReply => {
    if (req.method === 'GET') return models();
    if (!isMainLoop(req, o.tools, task)) return reply(req, { thinking: '', text: SIDE_ANSWER, calls: [] });
    main.add(req);
    if (bill) bills.set(req, bill);
    const d = decide(readConversation(req), o);
    decisions.push(d);
    return reply(req, d, bill);
  };
  // A GET (the model listing) is no prompt: the simulator bills POSTs only.
  const billed = sim ? cachingScript(sim, model, [], 87) : undefined;
  const upstream = await startFakeUpstream(front((req) => (billed && req.method === 'POST' ? billed(req) : model(req))));
  return Object.assign(upstream, { decisions, bills, mainLoop: () => upstream.requests.filter((r) => main.has(r)) });
}
