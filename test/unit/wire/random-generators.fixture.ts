// Random valid OpenAI and Anthropic conversations whose tool outputs are render slots, in the
// order decode must surface them as tool messages.
import { int, pick, randomText, Render, type Generated, type Part, type Rng } from './random-bodies.fixture';

function ids(rng: Rng, prefix: string, n: number, used: Set<string>): string[] {
  const out: string[] = [];
  while (out.length < n) {
    const id = `${prefix}${Math.floor(rng() * 1e9).toString(36)}`;
    if (used.has(id)) continue;
    out.push(id);
    used.add(id);
  }
  return out;
}

export function anthropicBody(rng: Rng): Generated {
  const r = new Render(rng);
  const used = new Set<string>();
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
  const text = (t: string) =>
    r.obj([
      ['type', '"text"'],
      ['text', r.str(t)],
    ]);
  const messages: Part[] = [];
  messages.push(
    r.obj([
      ['role', '"user"'],
      ['content', rng() < 0.5 ? r.str('fix the build') : r.arr([text('fix the build'), image()])],
    ]),
  );
  for (let turn = int(rng, 0, 6); turn > 0; turn--) {
    const callIds = ids(rng, 'toolu_', int(rng, 1, 3), used);
    const blocks: Part[] = [];
    if (rng() < 0.5)
      blocks.push(
        r.obj([
          ['type', '"thinking"'],
          ['thinking', r.str('plan')],
          ['signature', r.str('c2lnbmF0dXJl+/=')],
        ]),
      );
    if (rng() < 0.5) blocks.push(text('Running it.'));
    for (const id of callIds)
      blocks.push(
        r.obj([
          ['type', '"tool_use"'],
          ['id', r.str(id)],
          ['name', '"Bash"'],
          [
            'input',
            r.obj([
              ['command', r.str('make test')],
              ['n', '18446744073709551615'],
            ]),
          ],
        ]),
      );
    messages.push(
      r.obj([
        ['role', '"assistant"'],
        ['content', r.arr(blocks)],
      ]),
    );
    const results = [...callIds]
      .sort(() => rng() - 0.5)
      .map((id) => {
        const content =
          rng() < 0.5
            ? r.slot(randomText(rng))
            : r.arr(
                Array.from({ length: int(rng, 1, 4) }, () =>
                  rng() < 0.7
                    ? r.obj([
                        ['type', '"text"'],
                        ['text', r.slot(randomText(rng))],
                      ])
                    : image(),
                ),
              );
        const extra: [string, Part][] = rng() < 0.3 ? [['is_error', 'true']] : [];
        return r.obj([['type', '"tool_result"'], ['tool_use_id', r.str(id)], ['content', content], ...extra]);
      });
    if (rng() < 0.3) results.push(text('keep going'));
    if (rng() < 0.2) results.push(image());
    messages.push(
      r.obj([
        ['role', '"user"'],
        ['content', r.arr(results)],
      ]),
    );
  }
  if (rng() < 0.5)
    messages.push(
      r.obj([
        ['role', '"assistant"'],
        ['content', r.str('Done.')],
      ]),
    );
  const top: [string, Part][] = [['model', '"claude-sonnet-4-5"'], ['max_tokens', '8192'], ['messages', r.arr(messages)], ...r.junk()];
  if (rng() < 0.5)
    top.push([
      'system',
      r.arr([
        r.obj([
          ['type', '"text"'],
          ['text', r.str('You are Claude Code.')],
        ]),
      ]),
    ]);
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

export function openaiBody(rng: Rng): Generated {
  const r = new Render(rng);
  const used = new Set<string>();
  const messages: Part[] = [
    r.obj([
      ['role', pick(rng, ['"system"', '"developer"'])],
      ['content', r.str('You are a coding agent.')],
    ]),
    r.obj([['role', '"user"'], ['content', r.str('make the tests pass')], ...r.junk()]),
  ];
  for (let turn = int(rng, 0, 6); turn > 0; turn--) {
    const callIds = ids(rng, 'call_', int(rng, 1, 3), used);
    const calls = callIds.map((id) =>
      r.obj([
        ['id', r.str(id)],
        ['type', '"function"'],
        [
          'function',
          r.obj([
            ['name', '"bash"'],
            ['arguments', r.str('{"cmd":"npm test"}')],
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
    for (const id of [...callIds].sort(() => rng() - 0.5)) {
      messages.push(r.obj([['role', '"tool"'], ['tool_call_id', r.str(id)], ['content', r.slot(randomText(rng))], ...r.junk()]));
    }
  }
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
  return { root: [r.ws(), r.obj(top), r.ws()], messages, slots: r.slots };
}
