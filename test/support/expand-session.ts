// An Anthropic agent session whose history is what the gateway answered (the client echoes every
// assistant message back, as agents do), against a scripted model that works through transcript
// steps and, on chosen steps, asks for the original behind a marker: in-band (a sentence, then
// context_guru_expand alone; the gateway continues) or beside the step's own call (the client runs
// its call; the gateway re-inserts the expand call and its result on the next turn).
import type { RecordedRequest, ScriptedReply } from './fake-upstream';
import { anthropicMessage } from './fake-upstream-json';
import { anthropicSse, type AnthropicBlock } from './fake-upstream-sse';
import { SYSTEM, TASK, type AgentStep } from './transcripts';

type Json = Record<string, unknown>;
type Block = { type: string; id?: string; name?: string; input?: { id?: string }; tool_use_id?: string; content?: unknown };
interface Msg {
  role: string;
  content: string | Block[];
}

const EXPAND = 'context_guru_expand';
const MARKER = /<<cg:([A-Za-z0-9_-]{1,64})>>/g;
export type ExpandWay = 'in-band' | 'beside';

const stepCall = (k: number) => `toolu_step${k}`;

function blocksOf(req: RecordedRequest): Block[] {
  return (req.body.messages as Msg[]).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
}

/** The marker hashes in client tool results the model has not asked for yet, oldest first. */
function unexpanded(req: RecordedRequest): string[] {
  const blocks = blocksOf(req);
  const asked = new Set(blocks.filter((b) => b.type === 'tool_use' && b.name === EXPAND).map((b) => String(b.input?.id)));
  const out: string[] = [];
  for (const b of blocks) {
    if (b.type !== 'tool_result' || typeof b.content !== 'string') continue;
    for (const m of b.content.matchAll(MARKER)) if (!asked.has(m[1]!) && !out.includes(m[1]!)) out.push(m[1]!);
  }
  return out;
}

/** The scripted model: step k's call next, and on `expandAt` steps an expand first (in-band) or beside it. */
export function expandingModel(steps: readonly AgentStep[], expandAt: ReadonlyMap<number, ExpandWay>) {
  return (req: RecordedRequest): ScriptedReply => {
    const blocks = blocksOf(req);
    const k = steps.findIndex((_, i) => !blocks.some((b) => b.type === 'tool_result' && b.tool_use_id === stepCall(i)));
    const step = k < 0 ? undefined : steps[k];
    const call: AnthropicBlock[] = step ? [{ type: 'tool_use', id: stepCall(k), name: step.tool, input: step.args }] : [];
    const answerWith = (list: AnthropicBlock[]): ScriptedReply =>
      req.body.stream === true ? { kind: 'sse', events: [anthropicSse(list)] } : { kind: 'json', body: anthropicMessage(list) };
    const way = expandAt.get(k);
    const [hash] = unexpanded(req);
    const last = (req.body.messages as Msg[]).at(-1)!;
    const continuing =
      Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result' && b.tool_use_id?.startsWith('toolu_x'));
    if (way && hash && !continuing) {
      const expand: AnthropicBlock = { type: 'tool_use', id: `toolu_x${hash}`, name: EXPAND, input: { id: hash } };
      const words: AnthropicBlock = { type: 'text', text: 'Let me see the full output first.' };
      return answerWith(way === 'in-band' ? [words, expand] : [words, ...call, expand]);
    }
    return answerWith(step ? [{ type: 'text', text: `Step ${k}.` }, ...call] : [{ type: 'text', text: 'Done.' }]);
  };
}

/** The client side: the conversation so far, extended with each answer and the results of its own calls. */
export class EchoingClient {
  readonly messages: Json[] = [{ role: 'user', content: [{ type: 'text', text: TASK }] }];

  constructor(private readonly steps: readonly AgentStep[]) {}

  body(stream: boolean): Json {
    return {
      model: 'claude-fake',
      max_tokens: 1024,
      stream,
      system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
      tools: [
        { name: 'read_file', description: 'Read a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
      ],
      messages: this.withBreakpoint(),
    };
  }

  /** Claude Code's breakpoint on the newest block of the last message. */
  private withBreakpoint(): Json[] {
    const out = this.messages.map((m) => ({ ...m }));
    const last = out[out.length - 1]!;
    const content = [...(last.content as Json[])];
    content[content.length - 1] = { ...content[content.length - 1], cache_control: { type: 'ephemeral' } };
    last.content = content;
    return out;
  }

  /** Takes the assistant content the client received and answers its tool calls. */
  answer(content: Block[]): void {
    this.messages.push({ role: 'assistant', content });
    const calls = content.filter((b) => b.type === 'tool_use');
    const results = calls.map((c) => {
      const k = Number(/^toolu_step(\d+)$/.exec(c.id ?? '')?.[1] ?? -1);
      return { type: 'tool_result', tool_use_id: c.id, content: this.steps[k]?.output ?? `unknown tool ${c.name}` };
    });
    this.messages.push({ role: 'user', content: results.length ? results : [{ type: 'text', text: 'Go on.' }] });
  }
}

/** The assistant content of an answer, streamed (SSE text) or not (JSON text). */
export function answerContent(text: string): Block[] {
  if (!text.startsWith('event:') && !text.startsWith('data:')) return (JSON.parse(text) as { content: Block[] }).content;
  const blocks: Array<Block & { text?: string; partial?: string }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const ev = JSON.parse(line.slice(6)) as {
      type: string;
      index: number;
      content_block?: Block;
      delta?: { text?: string; partial_json?: string };
    };
    if (ev.type === 'content_block_start') blocks[ev.index] = { ...ev.content_block! };
    if (ev.type === 'content_block_delta') {
      const b = blocks[ev.index]!;
      if (ev.delta?.text !== undefined) b.text = (b.text ?? '') + ev.delta.text;
      if (ev.delta?.partial_json !== undefined) b.partial = (b.partial ?? '') + ev.delta.partial_json;
    }
  }
  return blocks.map(({ partial, ...b }) => (partial === undefined ? b : { ...b, input: JSON.parse(partial || '{}') as Block['input'] }));
}
