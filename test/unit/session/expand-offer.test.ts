// The tool list is decided once per session: the expand tool is offered from the first turn when
// the pipeline can emit markers, with the same bytes on every later turn — whether or not a marker
// has appeared yet — and a session that started without it never gets it mid-way.
import type { Dialect } from '@context-guru/components';
import { MemoryHotStore } from '@context-guru/storage';
import type { InjectMode } from '../../../libs/engine/src/engine.types';
import { createLogger } from '../../../libs/engine/src/logger';
import { prepareRequest } from '../../../libs/engine/src/prepare-request';
import { createTenantRuntime, loadConfigDocument, type TenantRuntime } from '../../../libs/engine/src/tenancy/tenant-runtime';
import { RawIndex } from '../../../libs/engine/src/wire/raw-index';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

const steps = agentSteps(12, 29);

function toolsBytes(raw: string): string {
  const span = new RawIndex(raw).topLevel('tools');
  return span ? raw.slice(span.start, span.end) : '';
}

async function session(
  dialect: Dialect,
  o: {
    config?: string;
    preset?: string;
    inject?: InjectMode;
    store?: MemoryHotStore;
    tenant?: TenantRuntime;
    from?: number;
    turns?: number;
    id?: string;
  },
) {
  let now = 1_700_000_000_000;
  const store = o.store ?? new MemoryHotStore({ now: () => now });
  const tenant = o.tenant ?? createTenantRuntime('default', loadConfigDocument(o.preset, o.config), 1);
  const deps = { store, clock: { now: () => now }, log: createLogger('error', () => undefined), injectMode: o.inject ?? ('auto' as const) };
  const out: string[] = [];
  for (let t = o.from ?? 1; t < (o.from ?? 1) + (o.turns ?? 8); t++) {
    now += 20_000;
    const raw = JSON.stringify(dialect === 'openai' ? openaiTurn(steps, t) : anthropicTurn(steps, t));
    const p = await prepareRequest(deps, {
      route: dialect,
      dialect,
      raw,
      tenant,
      pipeline: tenant.built.pipeline,
      cacheMode: 'auto',
      sessionHeader: o.id ?? 'offer',
      bypassHeader: false,
    });
    out.push(p.outgoing);
  }
  return { out, store };
}

describe.each(['anthropic', 'openai'] as const)('the expand tool on %s', (dialect) => {
  it('is offered from the first turn, before any marker, with the same bytes every turn', async () => {
    const { out } = await session(dialect, { preset: 'balanced' });
    const marked = (raw: string) => /<<cg:[0-9a-f]{16}>>/.test(JSON.stringify((JSON.parse(raw) as { messages: unknown }).messages));
    expect(marked(out[0]!)).toBe(false);
    expect(toolsBytes(out[0]!)).toContain('context_guru_expand');
    for (const raw of out) expect(toolsBytes(raw)).toBe(toolsBytes(out[0]!));
    expect(out.some(marked)).toBe(true);
  });

  it('is not offered by a pipeline that cannot emit markers, nor with INJECT_EXPAND=never', async () => {
    for (const o of [
      { config: 'pipeline: [format]' },
      { config: 'pipeline: [mask]\ncomponents:\n  mask: { marker_mode: off }' },
      { preset: 'balanced', inject: 'never' as const },
    ]) {
      const { out } = await session(dialect, o);
      for (const raw of out) expect(toolsBytes(raw)).not.toContain('context_guru_expand');
    }
  });

  it('is never added mid-session: a session that started under a marker-free pipeline keeps its tool list', async () => {
    const first = await session(dialect, { config: 'pipeline: [format]', turns: 3, id: 'late' });
    const later = await session(dialect, { preset: 'agent', store: first.store, from: 4, turns: 5, id: 'late' });
    for (const raw of later.out) expect(toolsBytes(raw)).toBe(toolsBytes(first.out[0]!));
  });
});
