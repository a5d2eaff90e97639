// cmdfilter over the DSL: config-time compilation and errors, pairing outputs with their commands,
// loss-typed hints, stash-before-rewrite, determinism and replay, the miss ledger and act
// counters — and, over every builtin's inline test inputs, that it never grows a message.
import {
  ConfigError,
  Pipeline,
  SUMMARY_SENTINEL,
  countTokens,
  findDefinition,
  markerIds,
  type Message,
  type Report,
} from '@context-guru/components';
import { builtinDocuments, splitTranscript } from '@context-guru/dsl';
import { cmdfilterComponent, commandOf, lossHint } from '../../../libs/components/src/offload/cmdfilter.component';
import { TenantStats } from '../../../apps/gateway/src/tenancy/tenant-stats';
import { emptyReport } from '../../../libs/engine/src/report/request-report';
import { testCtx } from '../../support/ctx';
import { PYTEST_RUN, SHOP_README } from '../../support/command-outputs';

const def = findDefinition('cmdfilter')!;
const make = (raw?: unknown) => def.create(def.options(raw, 'components.cmdfilter'));

function transcript(command: string | undefined, output: string, id = 'call_1'): Message[] {
  const msgs: Message[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Run it.' },
  ];
  if (command !== undefined)
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id, name: 'bash', arguments: JSON.stringify({ command }) }] });
  msgs.push({ role: 'tool', tool_call_id: id, content: output });
  return msgs;
}

const PYTEST = PYTEST_RUN;

const INLINE_CAP = `schema_version: 1
filters:
  journal:
    family: logs
    match: '^-- Logs begin at '
    max_lines: 5
`;

describe('cmdfilter options', () => {
  it('decodes the documented defaults', () => {
    expect(def.options(undefined, 'c')).toEqual({
      filters: [],
      disable_builtins: false,
      min_size: 400,
      marker_mode: 'full',
      cold_cache: false,
    });
    expect(def.gates).toEqual([
      'non_text_blocks',
      'empty',
      'below_min_size',
      'marker_or_kept_verbatim',
      'cached_prefix',
      'no_filter_match',
      'filter_matched_no_change',
      'marker_no_win',
    ]);
  });

  it('rejects unknown keys', () => {
    expect(() => def.options({ filter: [] }, 'components.cmdfilter')).toThrow(/components\.cmdfilter\.filter: unknown key/);
  });

  it('fails at config time on an invalid inline document, naming the filter, field and line', () => {
    const bad = 'schema_version: 1\nfilters:\n  journal:\n    match: x\n    strip_lines_matching: ["(unclosed"]\n';
    let err: unknown;
    try {
      def.options({ filters: [INLINE_CAP, bad] }, 'components.cmdfilter');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).path).toBe('components.cmdfilter.filters[1]');
    expect((err as ConfigError).message).toMatch(
      /^components\.cmdfilter\.filters\[1\]: filter "journal", field "strip_lines_matching\[0\]", line 5: invalid regex/,
    );
  });

  it('rejects an inline filter named like a builtin, and one whose inline test fails', () => {
    expect(() => def.options({ filters: ['schema_version: 1\nfilters:\n  pytest:\n    match: x\n'] }, 'c')).toThrow(
      /c\.filters\[0\]: filter "pytest", field "filters", line 3: duplicate filter name \(already defined at builtin:pytest\.yaml:\d+\)/,
    );
    const failing = `${INLINE_CAP}tests:\n  journal:\n    - {name: cap, input: "\\n-- Logs begin at Mon\\na\\n", expected: "nope"}\n`;
    expect(() => def.options({ filters: [failing] }, 'c')).toThrow(
      /c\.filters\[0\]: filter "journal", field "tests\.journal\[0\]", line 9: inline test "cap" failed/,
    );
  });
});

describe('cmdfilter run', () => {
  // The gateway keeps the ledgers per tenant, fed from each forwarded run's reports.
  let stats: TenantStats;
  const recorded = <R extends { reports: Report[] }>(r: R, tenant = 't'): R => {
    stats.record({ ...emptyReport('openai', tenant), reports: r.reports });
    return r;
  };
  const snapshot = (tenant = 't') =>
    stats.ledgers(tenant).snapshot() as {
      cmdfilter_filters?: Record<string, unknown>;
      cmdfilter_families?: Record<string, { acts: number }>;
      cmdfilter_selector_misses?: unknown;
    };
  beforeEach(() => {
    stats = new TenantStats();
  });

  it('is enabled only when at least one filter is loaded', async () => {
    const msgs = transcript('python -m pytest -v', PYTEST);
    const ctx = testCtx();
    const r = await new Pipeline([make({ disable_builtins: true })]).run(msgs, ctx);
    expect(r.reports[0]!.skipped).toBe(true);
    expect(r.messages).toEqual(msgs);
  });

  it('stashes the original first, then writes the filtered text + marker + Whole hint', async () => {
    const ctx = testCtx();
    const r = recorded(await new Pipeline([make()]).run(transcript('python -m pytest -v', PYTEST), ctx));
    const text = r.messages[3]!.content as string;
    const [id] = markerIds(text);
    expect(ctx.stash.entries.get(id!)).toBe(PYTEST);
    expect(text).toBe(
      'tests/test_cart.py::test_discount_rounding FAILED                     [100%]\n' +
        'FAILED tests/test_cart.py::test_discount_rounding - assert 4.995 == 5\n' +
        '========================= 1 failed, 23 passed in 0.31s =========================\n' +
        `<<cg:${id}>> [full output: call context_guru_expand]`,
    );
    expect(snapshot().cmdfilter_filters!.pytest).toEqual({
      acts: 1,
      saved_tokens: countTokens(PYTEST) - countTokens(text),
      saved_tokens_unique: countTokens(PYTEST) - countTokens(text),
    });
    expect(snapshot().cmdfilter_families!.tests!.acts).toBe(1);
  });

  it('appends the Tail hint for a clean tail cut and no hint when nothing was lost', () => {
    expect(lossHint({ loss: 'tail', keptLines: 5 })).toBe(' [truncated after line 5; rest via context_guru_expand]');
    expect(lossHint({ loss: 'whole', keptLines: 0 })).toBe(' [full output: call context_guru_expand]');
    expect(lossHint({ loss: 'none', keptLines: 0 })).toBe('');
  });

  it('inline filters apply with no recompile; a Tail cut names the line', async () => {
    const journal = [
      '-- Logs begin at Mon 2024-03-04 08:00:01 UTC. --',
      ...Array.from(
        { length: 40 },
        (_, i) => `Mar 04 08:${String(i).padStart(2, '0')}:17 web-1 nginx[812]: 10.0.0.${i} "GET /cart HTTP/1.1" 200 5123`,
      ),
    ].join('\n');
    const ctx = testCtx();
    const r = await new Pipeline([make({ filters: [INLINE_CAP], disable_builtins: true })]).run(
      transcript('journalctl -u nginx', journal),
      ctx,
    );
    const text = r.messages[3]!.content as string;
    expect(text.split('\n').slice(-2)).toEqual([
      '... (36 lines truncated)',
      `<<cg:${markerIds(text)[0]}>> [truncated after line 5; rest via context_guru_expand]`,
    ]);
  });

  it('is deterministic: the same output always yields the same bytes', async () => {
    const a = await new Pipeline([make()]).run(transcript('pytest -v', PYTEST), testCtx());
    const b = await new Pipeline([make()]).run(transcript('pytest -v', PYTEST, 'other_id'), testCtx());
    expect(a.messages[3]!.content).toBe(b.messages[3]!.content);
  });

  it('replays its frozen decision byte-identically on the next turn, even in the cached prefix', async () => {
    const first = testCtx();
    const t1 = recorded(await new Pipeline([make()]).run(transcript('pytest -v', PYTEST), first));
    const next = testCtx({ cache: { aware: true, maxCachedIdx: 10 }, snapshot: { frozen: first.state.newFrozen } });
    const t2 = recorded(await new Pipeline([make()]).run(transcript('pytest -v', PYTEST), next));
    expect(t2.messages[3]!.content).toBe(t1.messages[3]!.content);
    expect([...next.stash.entries.values()]).toEqual([PYTEST]);
    expect((snapshot().cmdfilter_filters!.pytest as { acts: number }).acts).toBe(1);
  });

  it('records unmatched outputs in the miss ledger by their first line, never the command', async () => {
    const catOut = SHOP_README;
    recorded(await new Pipeline([make()]).run(transcript('cat README.md', catOut), testCtx()));
    recorded(await new Pipeline([make()]).run(transcript('cat README.md', catOut), testCtx()));
    expect(snapshot().cmdfilter_selector_misses).toEqual([{ selector: '# Shop service', count: 1 }]);
    // Another tenant's identical output is its own miss, in its own ledger: a first line (where
    // secrets sit) never shows on another tenant's /stats.
    recorded(await new Pipeline([make()]).run(transcript('cat README.md', catOut), testCtx()), 'other');
    expect(snapshot('other').cmdfilter_selector_misses).toEqual([{ selector: '# Shop service', count: 1 }]);
    expect(snapshot().cmdfilter_selector_misses).toEqual([{ selector: '# Shop service', count: 1 }]);
    expect(snapshot('default').cmdfilter_selector_misses).toBeUndefined();
  });

  it('pairs an output with its command: arguments.command, an argv, else the tool name', () => {
    const call = (name: string, args: unknown) => ({ id: 'c', name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });
    expect(commandOf(call('bash', { command: 'pytest -q', description: 'run tests' }))).toBe('pytest -q');
    expect(commandOf(call('shell', { command: ['bash', '-lc', 'go test ./...'] }))).toBe('go test ./...');
    expect(commandOf(call('shell', { command: ['make', 'all'] }))).toBe('make all');
    expect(commandOf(call('read_file', { path: 'a.py' }))).toBe('read_file');
    expect(commandOf(call('bash', '{not json'))).toBe('bash');
  });

  it('marker_mode off writes the filtered text alone and reports an irreversible change', async () => {
    const ctx = testCtx();
    const r = await new Pipeline([make({ marker_mode: 'off' })]).run(transcript('pytest -v', PYTEST), ctx);
    expect(r.reports[0]!.irreversible).toBe(true);
    expect(r.messages[3]!.content).not.toContain('<<cg:');
    expect(r.messages[3]!.content).not.toContain(SUMMARY_SENTINEL);
    expect(ctx.stash.entries.size).toBe(0);
  });
});

describe('cmdfilter never grows a message', () => {
  // Every builtin's inline test inputs, paired with their commands, through the full component with
  // min_size 1: each tool message either stays byte-identical or gets strictly fewer tokens,
  // marker and hint included, with its original stashed under the marker.
  const cases = builtinDocuments().flatMap((d) => d.tests.map((t) => ({ id: `${t.filter}/${t.name}`, ...splitTranscript(t.input) })));
  const component = cmdfilterComponent.create(cmdfilterComponent.options({ min_size: 1 }, 'c'));

  it.each(cases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    if (c.output.trim() === '') return;
    const msgs = transcript(c.command, c.output);
    const ctx = testCtx();
    const r = await new Pipeline([component]).run(msgs, ctx);
    expect(r.reports[0]!.reverted).toBe(false);
    const after = r.messages[r.messages.length - 1]!.content as string;
    if (after === c.output) return;
    expect(countTokens(after)).toBeLessThan(countTokens(c.output));
    const [id] = markerIds(after);
    expect(ctx.stash.entries.get(id!)).toBe(c.output);
  });

  it('acts on most builtin inputs', async () => {
    let acted = 0;
    for (const c of cases) {
      const r = await new Pipeline([component]).run(transcript(c.command, c.output), testCtx());
      if (r.reports[0]!.keys.length > 0) acted++;
    }
    expect(acted).toBeGreaterThan(cases.length / 2);
  });
});
