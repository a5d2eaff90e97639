// Property: over hundreds of generated transcripts, every registered component, alone, never
// grows a message, is never reverted by the guard, leaves only markers that resolve from the
// stash, reports only gates it declares, and is deterministic (same input → byte-identical
// output). And none passes vacuously: over transcripts built for it (focused-transcripts.ts) each
// of the thirteen acts on most of them, with the same property holding while it does.
import {
  REGISTRY,
  Pipeline,
  markerIds,
  messageTokens,
  stashId,
  type Component,
  type ComponentDefinition,
  type Ctx,
  type Message,
} from '@context-guru/components';
import { parseModelEnv } from '../../../apps/gateway/src/model/model-env';
import { createModelRuntime, createModelSources } from '../../../apps/gateway/src/model/model-resolver';
import { testCtx } from '../../support/ctx';
import { startFakeModel, type FakeModelServer } from '../../support/fake-model-server';
import { FOCUS, focusedTranscript } from './focused-transcripts';
import { generateTranscript, type GeneratedCase } from './transcript-generator';

const CASES = 500;
/** Focused transcripts per component, and how many of them it must act on. */
const FOCUSED = 40;
const MUST_ACT_ON = 30;
/** Size floors worth lowering so the property also covers small outputs. */
const FLOOR_KEY = /^(min_[a-z_]*tokens|min_items|min_size|max_tokens|budget_tokens)$/;

const transcripts: GeneratedCase[] = Array.from({ length: CASES }, (_, i) => generateTranscript(0x5eed + i));

/** Defaults, and defaults with every numeric size floor set to 1 where the schema accepts it. */
function variants(def: ComponentDefinition): Array<{ label: string; options: unknown }> {
  const defaults = def.options(undefined, `components.${def.name}`);
  const out = [{ label: 'defaults', options: defaults }];
  if (typeof defaults !== 'object' || defaults === null) return out;
  let lowered: Record<string, unknown> = { ...(defaults as Record<string, unknown>) };
  let changed = false;
  for (const [key, value] of Object.entries(lowered)) {
    if (typeof value !== 'number' || value === 1 || !FLOOR_KEY.test(key)) continue;
    try {
      lowered = def.options({ ...lowered, [key]: 1 }, `components.${def.name}`) as Record<string, unknown>;
      changed = true;
    } catch {
      // The schema forbids 1 for this key; keep its default.
    }
  }
  if (changed) out.push({ label: 'floors lowered to 1', options: lowered });
  return out;
}

type Extra = Partial<Pick<Ctx, 'models'>>;

async function runOnce(component: Component, c: GeneratedCase, extra: Extra) {
  const ctx = { ...testCtx({ provider: c.provider, cache: c.cache, persistent: c.persistent }), ...extra };
  const result = await new Pipeline([component]).run(c.messages, ctx);
  return { result, report: result.reports[0]!, ctx };
}

function describeCase(def: ComponentDefinition, label: string, index: number): string {
  return `${def.name} (${label}) on transcript #${index} (seed ${0x5eed + index})`;
}

/** How many (transcript, options) runs the component changed something in; throws where the property fails. */
async function checkComponent(
  def: ComponentDefinition,
  cases: readonly GeneratedCase[] = transcripts,
  opts: { variants?: Array<{ label: string; options: unknown }>; extra?: Extra } = {},
): Promise<number> {
  let acted = 0;
  const extra = opts.extra ?? {};
  for (const { label, options } of opts.variants ?? variants(def)) {
    const component = def.create(options);
    for (const [index, c] of cases.entries()) {
      const where = describeCase(def, label, index);
      const input: Message[] = structuredClone(c.messages);
      const first = await runOnce(component, c, extra);
      // The guard is a backstop: a revert means the component itself misbehaved.
      if (first.report.reverted) throw new Error(`${where}: reverted: ${first.report.error}`);
      expect(c.messages).toEqual(input); // the caller's messages are never mutated

      const out = first.result.messages;
      if (first.report.changed.length > 0) acted++;
      const undeclared = Object.keys(first.report.gates).filter((g) => !def.gates.includes(g));
      if (undeclared.length > 0) throw new Error(`${where}: reported undeclared gates ${undeclared.join(', ')}`);
      if (out.length === input.length) {
        out.forEach((m, i) => {
          if (messageTokens(m) > messageTokens(input[i]!)) {
            throw new Error(`${where}: message ${i} grew ${messageTokens(input[i]!)} → ${messageTokens(m)}`);
          }
        });
      } else {
        expect(first.result.tokensAfter).toBeLessThanOrEqual(first.result.tokensBefore);
      }

      const before = new Set(markerIds(JSON.stringify(input)));
      const fresh = markerIds(JSON.stringify(out)).filter((id) => !before.has(id));
      for (const id of fresh) {
        const original = first.ctx.stash.entries.get(id);
        if (original === undefined) throw new Error(`${where}: marker ${id} does not resolve from the stash`);
        expect(stashId(original)).toBe(id);
      }
      if (!c.persistent) expect(fresh).toEqual([]);

      const second = await runOnce(component, c, extra);
      if (JSON.stringify(second.result.messages) !== JSON.stringify(out)) {
        throw new Error(`${where}: not deterministic`);
      }
    }
  }
  return acted;
}

/** A deliberately broken component, to prove the property bites. */
function broken(name: string, run: Component['run']): ComponentDefinition {
  return { name, kind: 'offload', gates: [], options: () => ({}), create: () => ({ name, kind: 'offload', run }) };
}

describe('never worse, over generated transcripts', () => {
  it('generates a deterministic, varied corpus', () => {
    expect(transcripts).toHaveLength(CASES);
    expect(JSON.stringify(generateTranscript(0x5eed))).toBe(JSON.stringify(transcripts[0]));
    const tools = transcripts.flatMap((t) => t.messages.filter((m) => m.role === 'tool'));
    expect(tools.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'image'))).toBe(true);
    expect(tools.some((m) => typeof m.content === 'string' && m.content.includes('<<cg:'))).toBe(true);
    expect(tools.some((m) => typeof m.content === 'string' && m.content.includes('12345678901234567890'))).toBe(true);
    expect(tools.some((m) => typeof m.content === 'string' && m.content.includes('```'))).toBe(true);
  });

  it('catches a component that emits a marker it never stashed', async () => {
    const liar = broken('liar', (messages) => {
      const i = messages.findIndex((m) => m.role === 'tool' && typeof m.content === 'string' && m.content.length > 200);
      if (i >= 0) messages[i]!.content = '[gone] <<cg:0123456789abcdef>>';
      return { keys: ['0123456789abcdef'] };
    });
    await expect(checkComponent(liar)).rejects.toThrow('does not resolve from the stash');
  });

  it('catches a component that grows a message', async () => {
    const grower = broken('grower', (messages) => {
      const m = messages.find((x) => x.role === 'tool' && typeof x.content === 'string');
      if (m) m.content = `${m.content as string} (annotated)`;
      return {};
    });
    await expect(checkComponent(grower)).rejects.toThrow('reverted: grew content tokens');
  });

  it('catches a component that is not deterministic', async () => {
    let calls = 0;
    const drifting = broken('drifting', (messages) => {
      const last = messages[messages.length - 1]!;
      if (typeof last.content === 'string' && last.content.length > 0) last.content = last.content.slice(0, -1 - (calls++ % 2));
      return { irreversible: true };
    });
    await expect(checkComponent(drifting)).rejects.toThrow('not deterministic');
  });

  it('catches a component that reports a gate it never declared', async () => {
    const sloppy = broken('sloppy', () => ({ gates: { made_up: 1 } }));
    await expect(checkComponent(sloppy)).rejects.toThrow('reported undeclared gates made_up');
  });

  for (const def of REGISTRY) {
    it(`${def.name}`, async () => {
      await checkComponent(def);
    }, 300_000);
  }
});

describe('every component acts on the transcripts it is meant for', () => {
  // summarize (and extract's code strategy) ask a model: a scripted one over real HTTP, whose
  // summary is grounded in the prompt it was sent, so every turn gets its own answer.
  let model: FakeModelServer;
  let extra: Extra;
  beforeAll(async () => {
    model = await startFakeModel((req) => ({ text: `<summary>Ran the order tests; ${req.prompt.length} chars of history.</summary>` }));
    const env = parseModelEnv({ CHEAP_MODEL: 'claude-haiku-4-5', CHEAP_MODEL_BASE: model.url, CHEAP_MODEL_KEY: 'k' });
    extra = {
      models: createModelSources(
        env,
        { dialect: 'openai', model: undefined, upstreamBase: model.url, headers: {} },
        createModelRuntime(env),
      ),
    };
  });
  afterAll(() => model.close());

  it('has a focused corpus for each registered component, and only for those', () => {
    expect(Object.keys(FOCUS).sort()).toEqual(REGISTRY.map((d) => d.name).sort());
  });

  for (const def of REGISTRY) {
    it(`${def.name} acts on at least ${MUST_ACT_ON} of ${FOCUSED}, never worse`, async () => {
      const cases = Array.from({ length: FOCUSED }, (_, i) => focusedTranscript(def.name, 0xf0c5 + i));
      const raw =
        def.name === 'summarize' ? { model: { source: 'config' } } : def.name === 'phi_evict' ? { budget_tokens: 2000 } : undefined;
      const options = def.options(raw, `components.${def.name}`);
      const acted = await checkComponent(def, cases, { variants: [{ label: 'focused', options }], extra });
      expect([def.name, acted >= MUST_ACT_ON ? 'acts' : `acted on ${acted}`]).toEqual([def.name, 'acts']);
    }, 300_000);
  }
});
