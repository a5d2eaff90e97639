// Agent sessions shaped the way real clients send them, for checking what summarize keeps: each
// turn the client appends one exchange and re-sends the whole transcript. The exchanges rotate
// through the shapes a kept tail can begin or end with — a single call, parallel calls, a tool
// result with a text block beside it (Claude Code's reminders), an image, an image-only tool
// result, a thinking block, a plain text answer followed by a user text turn — in both dialects,
// with string content or block / content-part arrays. Breakpoints are placed as agents place them:
// Claude Code marks the system prompt and the newest message's last block, moved every turn.
import { agentSteps, SYSTEM, TASK, type AgentStep } from './transcripts';

export type Dialect = 'anthropic' | 'openai';
/** strings: text as plain strings where the dialect allows it; blocks: every content as an array. */
export type ContentStyle = 'strings' | 'blocks';

type Json = Record<string, unknown>;

const SHAPES = ['single', 'parallel', 'reminder', 'text', 'image', 'thinking', 'image_only', 'single'] as const;
type Shape = (typeof SHAPES)[number];

const OUTPUT_CHARS = 2400;
const IMAGE = {
  type: 'base64',
  media_type: 'image/png',
  data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
};
const REMINDER = '<system-reminder>The user opened tests/test_module_0.py in the IDE.</system-reminder>';

const text = (t: string, style: ContentStyle): unknown => (style === 'strings' ? t : [{ type: 'text', text: t }]);
const clip = (s: AgentStep): string => s.output.slice(0, OUTPUT_CHARS);

function anthropicExchange(shape: Shape, calls: AgentStep[], style: ContentStyle, n: number): Json[] {
  const use = (s: AgentStep) => ({ type: 'tool_use', id: s.id.replace('call', 'toolu'), name: s.tool, input: s.args });
  const result = (s: AgentStep, content: unknown = clip(s)) => ({
    type: 'tool_result',
    tool_use_id: s.id.replace('call', 'toolu'),
    content,
  });
  const [first] = calls as [AgentStep];
  switch (shape) {
    case 'text':
      return [
        { role: 'assistant', content: [{ type: 'text', text: `Step ${n}: the parser splits on commas before trimming.` }] },
        { role: 'user', content: text(`Good. Now check step ${n + 1} of the plan.`, style) },
      ];
    case 'parallel':
      return [
        { role: 'assistant', content: [{ type: 'text', text: 'Reading these together.' }, ...calls.map(use)] },
        { role: 'user', content: calls.map((s) => result(s)) },
      ];
    case 'reminder':
      return [
        { role: 'assistant', content: [use(first)] },
        { role: 'user', content: [result(first), { type: 'text', text: REMINDER }] },
      ];
    case 'image':
      return [
        { role: 'assistant', content: [use(first)] },
        {
          role: 'user',
          content: [
            result(first, [
              { type: 'text', text: clip(first) },
              { type: 'image', source: IMAGE },
            ]),
          ],
        },
      ];
    case 'image_only':
      return [
        { role: 'assistant', content: [use(first)] },
        { role: 'user', content: [result(first, [{ type: 'image', source: IMAGE }])] },
      ];
    case 'thinking':
      return [
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'The failure is in parse().', signature: `sig${n}` }, use(first)] },
        { role: 'user', content: [result(first)] },
      ];
    case 'single':
      return [
        { role: 'assistant', content: [use(first)] },
        { role: 'user', content: [result(first, style === 'strings' ? clip(first) : [{ type: 'text', text: clip(first) }])] },
      ];
  }
}

function openaiExchange(shape: Shape, calls: AgentStep[], style: ContentStyle, n: number): Json[] {
  const call = (s: AgentStep) => ({ id: s.id, type: 'function', function: { name: s.tool, arguments: JSON.stringify(s.args) } });
  const tool = (s: AgentStep) => ({ role: 'tool', tool_call_id: s.id, content: text(clip(s), style) });
  const [first] = calls as [AgentStep];
  switch (shape) {
    case 'text':
      return [
        { role: 'assistant', content: text(`Step ${n}: the parser splits on commas before trimming.`, style) },
        { role: 'user', content: text(`Good. Now check step ${n + 1} of the plan.`, style) },
      ];
    case 'parallel':
      return [{ role: 'assistant', content: null, tool_calls: calls.map(call) }, ...calls.map(tool)];
    case 'reminder':
    case 'thinking':
      return [
        { role: 'assistant', content: text('Looking at it.', style), tool_calls: [call(first)] },
        tool(first),
        { role: 'user', content: text(REMINDER, style) },
      ];
    case 'image':
    case 'image_only':
      return [
        { role: 'assistant', content: null, tool_calls: [call(first)] },
        tool(first),
        {
          role: 'user',
          content: [
            { type: 'text', text: 'This is the failing screen.' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${IMAGE.data}` } },
          ],
        },
      ];
    case 'single':
      return [{ role: 'assistant', content: null, tool_calls: [call(first)] }, tool(first)];
  }
}

export interface SessionOptions {
  dialect: Dialect;
  style: ContentStyle;
  turns: number;
  seed: number;
  /** Rotate the shapes from this offset, so sessions put different shapes in their kept tails. */
  offset?: number;
}

/** The transcript (without breakpoints) the client holds after each turn: [turn 1, turn 2, …]. */
export function sessionTranscripts(o: SessionOptions): Json[][] {
  const steps = agentSteps(o.turns * 3, o.seed);
  const head: Json[] =
    o.dialect === 'openai'
      ? [
          { role: 'system', content: text(SYSTEM, o.style) },
          { role: 'user', content: text(TASK, o.style) },
        ]
      : [{ role: 'user', content: text(TASK, o.style) }];
  const out: Json[][] = [];
  let messages = head;
  for (let t = 0; t < o.turns; t++) {
    const shape = SHAPES[(t + (o.offset ?? 0)) % SHAPES.length]!;
    const calls = steps.slice(t * 3, t * 3 + (shape === 'parallel' ? 2 + (t % 2) : 1));
    const exchange = o.dialect === 'openai' ? openaiExchange(shape, calls, o.style, t) : anthropicExchange(shape, calls, o.style, t);
    messages = [...messages, ...exchange];
    out.push(messages);
  }
  return out;
}

/**
 * The body a client sends for `messages`: a deep copy with breakpoints on the last block of the
 * newest `marks` messages that hold blocks (Claude Code: 1, plus its system-prompt breakpoint), so
 * the previous turn's newest message loses its breakpoint. OpenAI bodies carry them only with blocks.
 */
export function clientBody(dialect: Dialect, messages: Json[], marks: number): Json {
  const copy = JSON.parse(JSON.stringify(messages)) as Json[];
  let placed = 0;
  for (let i = copy.length - 1; i >= 0 && placed < marks; i--) {
    const c = copy[i]!.content;
    if (!Array.isArray(c) || c.length === 0) continue;
    (c[c.length - 1] as Json).cache_control = { type: 'ephemeral' };
    placed++;
  }
  const tools = ['read_file', 'bash', 'http_get'];
  if (dialect === 'openai') {
    return {
      model: 'gpt-fake',
      messages: copy,
      tools: tools.map((name) => ({
        type: 'function',
        function: { name, parameters: { type: 'object', properties: { arg: { type: 'string' } } } },
      })),
    };
  }
  return {
    model: 'claude-fake',
    max_tokens: 1024,
    system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
    messages: copy,
    tools: tools.map((name) => ({ name, input_schema: { type: 'object', properties: { arg: { type: 'string' } } } })),
  };
}
