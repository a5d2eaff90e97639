import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, Pipeline, contentKey, frozenSlot, type Message } from '@context-guru/components';
import { extractComponent } from '../../../libs/components/src/offload/extract.component';
import { keywords } from '../../../libs/components/src/shared/keywords';
import { projectLines, queryContext } from '../../../libs/components/src/shared/line-projection';
import { testCtx } from '../../support/ctx';
import { FIXTURE_ROOT } from '../../support/fixtures';

const make = (raw?: unknown) => extractComponent.create(extractComponent.options(raw, 'components.extract'));
const logCase = (): Message[] =>
  JSON.parse(readFileSync(join(FIXTURE_ROOT, 'extract', 'projects-log-onto-query', 'input.json'), 'utf8')).messages;

describe('extract', () => {
  it('refuses rewrite with a full marker, naming the key', () => {
    expect(() => make({ rewrite: true })).toThrow(ConfigError);
    expect(() => make({ rewrite: true })).toThrow('components.extract.rewrite');
    expect(() => make({ rewrite: true, marker_mode: 'summary', strategy: 'code' })).not.toThrow();
  });

  it('rejects unknown keys inside the model and trigger blocks', () => {
    expect(() => make({ model: { source: 'incoming', base: 'x' } })).toThrow('components.extract.model.base');
    expect(() => make({ trigger: { min_tokens: 1 } })).toThrow('components.extract.trigger.min_tokens');
    expect(() => make({ model: { source: 'cheap' } })).toThrow('components.extract.model.source');
  });

  it('takes the output floor from trigger.min_output_tokens when set, else min_tokens', async () => {
    const messages = logCase();
    const raised = await new Pipeline([make({ trigger: { min_output_tokens: 100000 } })]).run(messages, testCtx());
    expect(raised.reports[0]!.gates).toEqual({ below_output_floor: 1 });
    const lowered = await new Pipeline([make({ min_tokens: 100000, trigger: { min_output_tokens: 10 } })]).run(messages, testCtx());
    expect(lowered.reports[0]!.keys).toHaveLength(1);
  });

  it('reads intent from the first user turn, the latest turns and the string values of call arguments', () => {
    const messages: Message[] = [
      { role: 'system', content: 'You are an agent. Kubernetes cluster admin.' },
      { role: 'user', content: 'The ledger deployment keeps restarting.' },
      { role: 'assistant', content: 'Old reasoning about migrations.' },
      { role: 'user', content: 'Focus on the readiness probe.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', name: 'bash', arguments: '{"command":"kubectl describe pod ledger-api-7c9f","timeout":30}' }],
      },
    ];
    const keys = keywords(queryContext(messages));
    expect([...keys].sort()).toEqual([
      '7c9f',
      'deployment',
      'describe',
      'focus',
      'keeps',
      'kubectl',
      'ledger',
      'probe',
      'readiness',
      'restarting',
    ]);
    expect(keys.has('migrations')).toBe(false);
    expect(keys.has('kubernetes')).toBe(false);
    expect(keys.has('command')).toBe(false);
  });

  it('ignores a keyword found on more than half of the lines, and keeps a one-line gap verbatim', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `[worker] page ${i} fetched`);
    lines[14] = '[worker] token refresh';
    lines[20] = '[worker] token refresh';
    const projected = projectLines(lines.join('\n'), new Set(['worker', 'token']), 2, 2)!;
    expect(projected.split('\n')).toEqual([
      '[worker] page 0 fetched',
      '[worker] page 1 fetched',
      '… (12 lines omitted)',
      '[worker] token refresh',
      '… (5 lines omitted)',
      '[worker] token refresh',
      '… (7 lines omitted)',
      '[worker] page 28 fetched',
      '[worker] page 29 fetched',
    ]);
    lines[16] = '[worker] token refresh';
    expect(projectLines(lines.join('\n'), new Set(['token']), 2, 2)!.split('\n')).toContain('[worker] page 15 fetched');
  });

  it('projects one output anew for other keywords or other head and tail sizes (its memo is keyed by all of them)', () => {
    const text = Array.from({ length: 40 }, (_, i) => (i === 10 ? 'alpha retry' : i === 30 ? 'gamma retry' : `line ${i}`)).join('\n');
    const alpha = projectLines(text, new Set(['alpha']), 1, 1);
    const gamma = projectLines(text, new Set(['gamma']), 1, 1);
    expect(alpha).toContain('alpha retry');
    expect(alpha).not.toContain('gamma retry');
    expect(gamma).toContain('gamma retry');
    expect(gamma).not.toContain('alpha retry');
    expect(projectLines(text, new Set(['alpha']), 3, 1)).toContain('line 2');
    expect(projectLines(text, new Set(['alpha']), 1, 1)).toBe(alpha);
  });

  it('replays its frozen projection on a later turn even though the question changed', async () => {
    const messages = logCase();
    const first = testCtx();
    const turn1 = await new Pipeline([make()]).run(messages, first);
    const later: Message[] = [
      ...messages,
      { role: 'assistant', content: 'The refresh timed out twice and recovered.' },
      { role: 'user', content: 'Which warehouse tables were upserted?' },
    ];
    const second = testCtx({
      cache: { aware: true, maxCachedIdx: 4, cold: false },
      snapshot: { frozen: new Map(first.state.newFrozen) },
    });
    const turn2 = await new Pipeline([make()]).run(later, second);
    expect(turn2.messages[3]).toEqual(turn1.messages[3]);
    expect(turn2.reports[0]!.keys).toHaveLength(1);
  });

  it('does not re-derive a lost projection inside the cached prefix: the same bytes are not guaranteed', async () => {
    const messages = logCase();
    const log = messages[3]!.content as string;
    const ctx = testCtx({
      cache: { aware: true, maxCachedIdx: 3, cold: false },
      snapshot: { lost: new Set([frozenSlot('extract', contentKey(log))]) },
    });
    const result = await new Pipeline([make()]).run(messages, ctx);
    expect(result.reports[0]!.gates).toEqual({ cached_prefix: 1 });
    expect(result.messages[3]!.content).toBe(log);
  });

  it('projects at depth on a provably cold cache only when cold_cache is set', async () => {
    const cold = { aware: true, maxCachedIdx: 3, cold: true };
    const off = await new Pipeline([make()]).run(logCase(), testCtx({ cache: cold }));
    expect(off.reports[0]!.gates).toEqual({ cached_prefix: 1 });
    const on = await new Pipeline([make({ cold_cache: true })]).run(logCase(), testCtx({ cache: cold }));
    expect(on.reports[0]!.keys).toHaveLength(1);
  });

  it('counts the deterministic fallback once per projected output for rlm too', async () => {
    const messages = logCase();
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_2', name: 'bash', arguments: '{"command":"cat /var/log/crm/nightly.log.1"}' }],
      },
      { role: 'tool', tool_call_id: 'call_2', content: messages[3]!.content + '\n2025-03-14 09:12:24,001 INFO  [crm_sync] exiting' },
    );
    const result = await new Pipeline([make({ strategy: 'rlm' })]).run(messages, testCtx());
    expect(result.reports[0]!.gates).toEqual({ model_unavailable_fell_back_to_deterministic: 2 });
    expect(result.reports[0]!.keys).toHaveLength(2);
  });

  it('marks the drop irreversible and stashes nothing with marker_mode off', async () => {
    const ctx = testCtx();
    const result = await new Pipeline([make({ marker_mode: 'off' })]).run(logCase(), ctx);
    const out = result.messages[3]!.content as string;
    expect(out).toContain('lines omitted)');
    expect(out).not.toContain('<<cg:');
    expect(result.reports[0]!.irreversible).toBe(true);
    expect(ctx.stash.entries.size).toBe(0);
  });
});
