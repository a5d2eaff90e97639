// Random valid agent conversations in both dialects, rendered with hostile-but-valid JSON (odd
// whitespace, key order, escapes, unknown fields): parallel tool calls answered in shuffled order,
// thinking and text beside tool_use, array, error and image-only tool results, plain chat turns
// between exchanges. What a tool output's text is comes from the caller: a real file or command log
// (`realToolOutput`, for a whole body) or a render slot (`slotToolOutput`, for the encoder's tests,
// which predict every byte from the slots; decode surfaces exactly the slots as tool messages).
import type { Dialect } from '@context-guru/components';
import { int, pick, randomText, Render, type Generated, type Part, type Rng } from './random-bodies';
import { agentSteps, TASK } from './transcripts';

/** The JSON string (or slot) a tool output's text is rendered as. */
export type ToolText = (r: Render) => Part;

const OUTPUTS = agentSteps(40, 11).map((s) => s.output);
const SHORT = ['ok', 'README.md\nsrc\ntests', 'exit status 0', '{"deleted":true}'];
const FOLLOW_UPS = ['Also make sure the HTTP client tests still pass.', 'Use the existing helper instead of a new one.', 'Keep going.'];
const INTERIM = 'Here is what I found so far.';
const DONE = 'Done: all tests pass.';

/** Real file contents and command logs, and now and then a short answer. */
export const realToolOutput: ToolText = (r) => r.str(r.rng() < 0.8 ? pick(r.rng, OUTPUTS) : pick(r.rng, SHORT));

/** A slot over random hostile text (escapes, surrogates, NUL, long runs). */
export const slotToolOutput: ToolText = (r) => r.slot(randomText(r.rng));

export function randomConversation(dialect: Dialect, rng: Rng, toolText: ToolText): Generated {
  return dialect === 'openai' ? openaiConversation(new Render(rng), toolText) : anthropicConversation(new Render(rng), toolText);
}

/** One to three call ids no earlier call of the conversation used. */
function callIds(rng: Rng, prefix: string, used: Set<string>): string[] {
  const ids: string[] = [];
  for (let n = int(rng, 1, 3); ids.length < n;) {
    const id = `${prefix}${Math.floor(rng() * 1e9).toString(36)}`;
    if (used.has(id)) continue;
    used.add(id);
    ids.push(id);
  }
  return ids;
}

const shuffled = <T>(rng: Rng, xs: readonly T[]): T[] => [...xs].sort(() => rng() - 0.5);
const message = (r: Render, role: string, content: Part, extra: [string, Part][] = []): Part =>
  r.obj([['role', `"${role}"`], ['content', content], ...extra]);

function anthropicConversation(r: Render, toolText: ToolText): Generated {
  const rng = r.rng;
  const used = new Set<string>();
  const text = (t: Part) =>
    r.obj([
      ['type', '"text"'],
      ['text', t],
    ]);
  const image = () =>
    r.obj([
      ['type', '"image"'],
      [
        'source',
        r.obj([
          ['type', '"base64"'],
          ['media_type', '"image/png"'],
          ['data', r.str('iVBORw0KGgo=')],
        ]),
      ],
    ]);
  const messages: Part[] = [message(r, 'user', rng() < 0.5 ? r.str(TASK) : r.arr([text(r.str(TASK)), ...(rng() < 0.3 ? [image()] : [])]))];
  for (let turn = int(rng, 0, 8); turn > 0; turn--) {
    if (rng() < 0.2) {
      const followUp = pick(rng, FOLLOW_UPS);
      messages.push(message(r, 'assistant', r.str(INTERIM)));
      messages.push(message(r, 'user', rng() < 0.5 ? r.str(followUp) : r.arr([text(r.str(followUp))])));
      continue;
    }
    const ids = callIds(rng, 'toolu_', used);
    const blocks: Part[] = [];
    if (rng() < 0.3)
      blocks.push(
        r.obj([
          ['type', '"thinking"'],
          ['thinking', r.str('check the parser first')],
          ['signature', r.str('c2lnbmF0dXJl+/=')],
        ]),
      );
    if (rng() < 0.5) blocks.push(text(r.str('Let me look.')));
    for (const id of ids) {
      // A number no re-serializer writes back as received.
      const input = r.obj([
        ['command', r.str('pytest -q')],
        ['n', '18446744073709551615'],
      ]);
      blocks.push(
        r.obj([
          ['type', '"tool_use"'],
          ['id', r.str(id)],
          ['name', '"Bash"'],
          ['input', input],
        ]),
      );
    }
    messages.push(message(r, 'assistant', r.arr(blocks)));
    const results = shuffled(rng, ids).map((id) => {
      const content =
        rng() < 0.5 ? toolText(r) : r.arr(Array.from({ length: int(rng, 1, 4) }, () => (rng() < 0.7 ? text(toolText(r)) : image())));
      const extra: [string, Part][] = rng() < 0.3 ? [['is_error', 'true']] : [];
      return r.obj([['type', '"tool_result"'], ['tool_use_id', r.str(id)], ['content', content], ...extra]);
    });
    if (rng() < 0.3) results.push(text(r.str(pick(rng, FOLLOW_UPS))));
    if (rng() < 0.2) results.push(image());
    messages.push(message(r, 'user', r.arr(results)));
  }
  if (rng() < 0.4) messages.push(message(r, 'assistant', rng() < 0.5 ? r.str(DONE) : r.arr([text(r.str(DONE))])));
  const top: [string, Part][] = [['model', '"claude-sonnet-4-5"'], ['max_tokens', '8192'], ['messages', r.arr(messages)], ...r.junk()];
  if (rng() < 0.5) top.push(['system', r.arr([text(r.str('You are Claude Code.'))])]);
  if (rng() < 0.7)
    top.push([
      'tools',
      r.arr([
        r.obj([
          ['name', '"Bash"'],
          ['input_schema', r.obj([['type', '"object"']])],
        ]),
      ]),
    ]);
  if (rng() < 0.3) top.push(['stream', 'true']);
  return { root: [r.ws(), r.obj(top), r.ws()], messages, slots: r.slots };
}

function openaiConversation(r: Render, toolText: ToolText): Generated {
  const rng = r.rng;
  const used = new Set<string>();
  const messages: Part[] = [
    r.obj([
      ['role', pick(rng, ['"system"', '"developer"'])],
      ['content', r.str('You are a careful coding agent.')],
    ]),
    message(r, 'user', r.str(TASK), r.junk()),
  ];
  for (let turn = int(rng, 0, 8); turn > 0; turn--) {
    if (rng() < 0.2) {
      messages.push(message(r, 'assistant', r.str(INTERIM)));
      messages.push(message(r, 'user', r.str(pick(rng, FOLLOW_UPS))));
      continue;
    }
    const ids = callIds(rng, 'call_', used);
    const calls = ids.map((id) =>
      r.obj([
        ['id', r.str(id)],
        ['type', '"function"'],
        [
          'function',
          r.obj([
            ['name', '"bash"'],
            ['arguments', r.str('{"cmd":"pytest -q"}')],
          ]),
        ],
      ]),
    );
    messages.push(message(r, 'assistant', rng() < 0.5 ? 'null' : r.str('Checking.'), [['tool_calls', r.arr(calls)]]));
    for (const id of shuffled(rng, ids)) messages.push(message(r, 'tool', toolText(r), [['tool_call_id', r.str(id)], ...r.junk()]));
  }
  if (rng() < 0.4) messages.push(message(r, 'assistant', r.str(DONE)));
  const top: [string, Part][] = [['model', '"gpt-4o"'], ['messages', r.arr(messages)], ...r.junk()];
  if (rng() < 0.6)
    top.push([
      'tools',
      r.arr([
        r.obj([
          ['type', '"function"'],
          ['function', r.obj([['name', '"bash"']])],
        ]),
      ]),
    ]);
  if (rng() < 0.3) top.push(['stream', 'true']);
  return { root: [r.ws(), r.obj(top), r.ws()], messages, slots: r.slots };
}
