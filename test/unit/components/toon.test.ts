import { Pipeline, type Message } from '@context-guru/components';
import { toonComponent } from '../../../libs/components/src/reformat/toon.component';
import { decodeToon, encodeToon, toonFor } from '../../../libs/components/src/reformat/toon.component';
import { hasInexactNumbers } from '../../../libs/components/src/shared/json-scan';
import { testCtx } from '../../support/ctx';

const make = (raw?: unknown) => toonComponent.create(toonComponent.options(raw, 'components.toon'));
const tool = (content: string): Message => ({ role: 'tool', tool_call_id: 'call_1', content });

const runs = [
  { id: 9041, workflow: 'ci', branch: 'main', status: 'completed', conclusion: 'success', attempt: 1 },
  { id: 9040, workflow: 'ci', branch: 'fix/retry-after', status: 'completed', conclusion: 'failure', attempt: 2 },
  { id: 9039, workflow: 'release', branch: 'main', status: 'in_progress', conclusion: null, attempt: 1 },
  { id: 9038, workflow: 'ci', branch: 'deps/pydantic-2.7', status: 'completed', conclusion: 'success', attempt: 1 },
  { id: 9037, workflow: 'docs', branch: 'main', status: 'completed', conclusion: 'skipped', attempt: 1 },
];

describe('toon', () => {
  it('writes null as an empty cell and an empty string as "" so the text still tells them apart', () => {
    const text = encodeToon([
      { name: 'unit', value: null },
      { name: 'label', value: '' },
    ]);
    expect(text).toBe('[2]{name,value}:\nunit,\nlabel,""');
  });

  it('decodes its own output back to the array, with null read back as ""', () => {
    const text = encodeToon(runs);
    const back = decodeToon(text) as Array<Record<string, unknown>>;
    expect(back).toEqual(runs.map((r) => ({ ...r, conclusion: r.conclusion ?? '' })));
  });

  it('keeps strings that look like numbers, booleans or carry separators as strings', () => {
    const rows = [
      { sku: '00123', active: 'true', note: 'ships in 2, maybe 3 days', qty: 3 },
      { sku: '1e5', active: 'false', note: ' leading space', qty: 0 },
      { sku: '[2]{a,b}:', active: '-', note: 'two\nlines, "quoted" — ünïcode', qty: -1.5 },
    ];
    const verdict = toonFor(JSON.stringify(rows, null, 2), 0);
    expect(verdict.ok).toBe(true);
    if (verdict.ok) expect(decodeToon(verdict.text)).toEqual(rows);
  });

  it('accepts the same key set in a different order per element', () => {
    const rows = [
      { id: 1, name: 'ada', role: 'admin' },
      { role: 'viewer', id: 2, name: 'grace' },
      { name: 'linus', role: 'viewer', id: 3 },
    ];
    const verdict = toonFor(JSON.stringify(rows, null, 2), 0);
    expect(verdict.ok).toBe(true);
    if (verdict.ok) expect(decodeToon(verdict.text)).toEqual(rows);
  });

  it.each([
    [
      'a nested object',
      [
        { id: 1, user: { login: 'ada' } },
        { id: 2, user: { login: 'bob' } },
      ],
    ],
    [
      'a nested array',
      [
        { id: 1, tags: ['x'] },
        { id: 2, tags: [] },
      ],
    ],
    [
      'ragged keys',
      [
        { id: 1, name: 'a' },
        { id: 2, title: 'b' },
      ],
    ],
    ['scalars', [1, 2, 3, 4, 5, 6, 7, 8]],
    ['an empty array', []],
    ['an object', { items: [{ id: 1 }, { id: 2 }] }],
    ['objects without keys', [{}, {}]],
  ])('leaves %s alone as not_uniform_object_array', (_label, value) => {
    expect(toonFor(JSON.stringify(value, null, 2), 0)).toEqual({ ok: false, gate: 'not_uniform_object_array' });
  });

  it('refuses numbers a JS number would silently change', () => {
    const text = '[{"id":1767230519034925056,"n":1},{"id":1767230519034925057,"n":2}]';
    expect(toonFor(text, 0)).toEqual({ ok: false, gate: 'round_trip_mismatch' });
  });

  it('tells exact number literals from inexact ones, ignoring digits inside strings', () => {
    expect(hasInexactNumbers('[1, -2, 3.25, 1.0, 1e5, 1.5e-7, -0, 9007199254740991]')).toBe(false);
    expect(hasInexactNumbers('[9007199254740993]')).toBe(true);
    expect(hasInexactNumbers('[0.12345678901234567890123]')).toBe(true);
    expect(hasInexactNumbers('["9007199254740993", "say \\"12345678901234567890\\""]')).toBe(false);
  });

  it('only rewrites tool outputs, and the pipeline keeps the rewrite (it shrinks)', async () => {
    const payload = JSON.stringify(runs, null, 2);
    const messages: Message[] = [{ role: 'user', content: payload }, tool(payload)];
    const result = await new Pipeline([make()]).run(messages, testCtx());
    const report = result.reports[0]!;
    expect(report.reverted).toBe(false);
    expect(report.changed).toEqual([1]);
    expect(result.messages[0]!.content).toBe(payload);
    expect(result.messages[1]!.content).toBe(encodeToon(runs));
    expect(report.tokensAfter).toBeLessThan(report.tokensBefore);
  });

  it('measures against compact JSON, so pretty-printing alone never makes it act', () => {
    const rows = [{ message: 'Could not resolve to a PullRequest with the number of 1877.' }];
    expect(toonFor(JSON.stringify(rows, null, 8), 0)).toEqual({ ok: false, gate: 'already_dense' });
  });

  it('honours min_tokens from its block', async () => {
    const messages = [tool(JSON.stringify(runs))];
    const result = await new Pipeline([make({ min_tokens: 100000 })]).run(messages, testCtx());
    expect(result.reports[0]!.gates).toEqual({ below_min_tokens: 1 });
    expect(() => make({ min_tokns: 3 })).toThrow('components.toon.min_tokns');
  });
});
