// Random valid agent transcripts for summarize's shape property, in both dialects and rendered with
// hostile-but-valid JSON (odd whitespace, key order, escapes): parallel tool calls answered in
// shuffled order, text and thinking beside tool_use, array and image-only tool results, user turns
// between exchanges. Tool outputs are real files and command logs (test/support/transcripts.ts).
import type { Dialect } from '@context-guru/components';
import { agentSteps, TASK } from '../../support/transcripts';
import { flatten, int, mulberry32, pick, Render, type Part, type Rng } from '../wire/random-bodies.fixture';

const OUTPUTS = agentSteps(40, 11).map((s) => s.output);
const SHORT = ['ok', 'README.md\nsrc\ntests', 'exit status 0', '{"deleted":true}'];
const FOLLOW_UPS = ['Also make sure the HTTP client tests still pass.', 'Use the existing helper instead of a new one.', 'Keep going.'];

function output(rng: Rng): string {
  return rng() < 0.8 ? pick(rng, OUTPUTS) : pick(rng, SHORT);
}

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

function shuffled<T>(rng: Rng, xs: readonly T[]): T[] {
  return [...xs].sort(() => rng() - 0.5);
}

function anthropic(rng: Rng): string {
  const r = new Render(rng);
  const used = new Set<string>();
  const text = (t: string) =>
    r.obj([
      ['type', '"text"'],
      ['text', r.str(t)],
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
  const messages: Part[] = [
    r.obj([
      ['role', '"user"'],
      ['content', rng() < 0.5 ? r.str(TASK) : r.arr([text(TASK), ...(rng() < 0.3 ? [image()] : [])])],
    ]),
  ];
  for (let turn = int(rng, 1, 8); turn > 0; turn--) {
    if (rng() < 0.2) {
      messages.push(
        r.obj([
          ['role', '"assistant"'],
          ['content', r.str('Here is what I found so far.')],
        ]),
      );
      messages.push(
        r.obj([
          ['role', '"user"'],
          ['content', rng() < 0.5 ? r.str(pick(rng, FOLLOW_UPS)) : r.arr([text(pick(rng, FOLLOW_UPS))])],
        ]),
      );
      continue;
    }
    const ids = callIds(rng, 'toolu_', used);
    const blocks: Part[] = [];
    if (rng() < 0.3)
      blocks.push(
        r.obj([
          ['type', '"thinking"'],
          ['thinking', r.str('check the parser first')],
          ['signature', r.str('c2ln+/=')],
        ]),
      );
    if (rng() < 0.5) blocks.push(text('Let me look.'));
    for (const id of ids)
      blocks.push(
        r.obj([
          ['type', '"tool_use"'],
          ['id', r.str(id)],
          ['name', '"Bash"'],
          ['input', r.obj([['command', r.str('pytest -q')]])],
        ]),
      );
    messages.push(
      r.obj([
        ['role', '"assistant"'],
        ['content', r.arr(blocks)],
      ]),
    );
    const results: Part[] = shuffled(rng, ids).map((id) => {
      const roll = rng();
      const content =
        roll < 0.6 ? r.str(output(rng)) : roll < 0.9 ? r.arr([text(output(rng)), ...(rng() < 0.3 ? [image()] : [])]) : r.arr([image()]);
      return r.obj([
        ['type', '"tool_result"'],
        ['tool_use_id', r.str(id)],
        ['content', content],
      ]);
    });
    if (rng() < 0.2) results.push(text(pick(rng, FOLLOW_UPS)));
    messages.push(
      r.obj([
        ['role', '"user"'],
        ['content', r.arr(results)],
      ]),
    );
  }
  if (rng() < 0.4)
    messages.push(
      r.obj([
        ['role', '"assistant"'],
        ['content', r.arr([text('Done: all tests pass.')])],
      ]),
    );
  const top: [string, Part][] = [['model', '"claude-sonnet-4-5"'], ['max_tokens', '8192'], ['messages', r.arr(messages)], ...r.junk()];
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
  return flatten([r.ws(), r.obj(top), r.ws()], r.slots, new Map());
}

function openai(rng: Rng): string {
  const r = new Render(rng);
  const used = new Set<string>();
  const messages: Part[] = [
    r.obj([
      ['role', pick(rng, ['"system"', '"developer"'])],
      ['content', r.str('You are a careful coding agent.')],
    ]),
    r.obj([['role', '"user"'], ['content', r.str(TASK)], ...r.junk()]),
  ];
  for (let turn = int(rng, 1, 8); turn > 0; turn--) {
    if (rng() < 0.2) {
      messages.push(
        r.obj([
          ['role', '"assistant"'],
          ['content', r.str('Here is what I found so far.')],
        ]),
      );
      messages.push(
        r.obj([
          ['role', '"user"'],
          ['content', r.str(pick(rng, FOLLOW_UPS))],
        ]),
      );
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
    messages.push(
      r.obj([
        ['role', '"assistant"'],
        ['content', rng() < 0.5 ? 'null' : r.str('Checking.')],
        ['tool_calls', r.arr(calls)],
      ]),
    );
    for (const id of shuffled(rng, ids))
      messages.push(r.obj([['role', '"tool"'], ['tool_call_id', r.str(id)], ['content', r.str(output(rng))], ...r.junk()]));
  }
  if (rng() < 0.4)
    messages.push(
      r.obj([
        ['role', '"assistant"'],
        ['content', r.str('Done: all tests pass.')],
      ]),
    );
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
  return flatten([r.ws(), r.obj(top), r.ws()], r.slots, new Map());
}

export function transcriptBody(dialect: Dialect, seed: number): string {
  const rng = mulberry32(seed);
  return dialect === 'openai' ? openai(rng) : anthropic(rng);
}
