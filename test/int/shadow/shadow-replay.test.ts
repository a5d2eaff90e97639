// Shadow evaluation end to end on the real Redis and Postgres: tenant `shadowed` serves balanced
// with the agent preset's stored version in shadow (every request sampled), `twin` serves balanced
// alone, `candidate` serves agent for real. Replayed sessions in all three dialects: every body
// forwarded for `shadowed` is byte-identical to `twin`'s and provider-valid; `shadowed` leaves the
// very same Redis keys and durable session rows as `twin` (the candidate stashes nothing, touches
// no session state), while `candidate` shows what agent does write when it is real; the admin API
// reports the candidate's would-be savings beside the active's on the same requests. Under a
// burst the candidate is shed (drops counted) and never runs while a real request compresses.
import { validateProviderShape } from '../../../libs/engine/src/wire/shape-validator';
import { startShadowRig, type RigDialect, type ShadowRig } from '../../support/shadow-rig';
import { responsesTurn } from '../../support/responses-fixtures';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

jest.setTimeout(180_000);

const TURNS = 8;
const ACTIVE = { preset: 'balanced' };
const CANDIDATE = { preset: 'agent' };
const DIALECTS = ['openai', 'anthropic', 'responses'] as const;
const TURN_BODY = { openai: openaiTurn, anthropic: anthropicTurn, responses: responsesTurn };
const turnBody = (dialect: RigDialect, steps: ReturnType<typeof agentSteps>, t: number) =>
  TURN_BODY[dialect](steps, t) as Record<string, unknown>;

let rig: ShadowRig;
beforeAll(async () => {
  rig = await startShadowRig({ active: ACTIVE, candidate: CANDIDATE, sample: 1 });
});
afterAll(() => rig?.close());

describe('shadow evaluation of a candidate preset', () => {
  const forwarded: Record<'shadowed' | 'twin', string[]> = { shadowed: [], twin: [] };
  const sent: string[] = [];

  beforeAll(async () => {
    for (const dialect of DIALECTS) {
      const steps = agentSteps(TURNS * 3, { openai: 31, anthropic: 32, responses: 33 }[dialect]);
      for (let t = 3; t <= TURNS * 3; t += 3) {
        const body = turnBody(dialect, steps, t);
        const session = `replay-${dialect}`;
        sent.push(JSON.stringify(body));
        forwarded.twin.push(await rig.post('twin', dialect, session, body));
        forwarded.shadowed.push(await rig.post('shadowed', dialect, session, body));
        await rig.post('candidate', dialect, session, body);
      }
    }
    await rig.settleShadow();
  });

  it('never changes a forwarded byte: every turn of every dialect goes out as it does without shadow, provider-valid', () => {
    expect(forwarded.shadowed).toHaveLength(DIALECTS.length * TURNS);
    expect(forwarded.shadowed).toEqual(forwarded.twin);
    rig.upstream.requests.forEach((r, i) => expect([i, validateProviderShape(r.dialect, r.body)]).toEqual([i, []]));
    // balanced did rewrite these bodies, so "identical" is not the identity of untouched bytes.
    expect(forwarded.shadowed.filter((raw, i) => raw !== sent[i]).length).toBeGreaterThan(TURNS);
    // The Responses session (the last TURNS bodies) was rewritten too.
    expect(forwarded.shadowed.slice(2 * TURNS).filter((raw, i) => raw !== sent[2 * TURNS + i]).length).toBeGreaterThan(0);
  });

  it('never stashes and never touches session state: the same Redis keys and durable rows as without shadow', async () => {
    const [shadowedKeys, twinKeys, candidateKeys] = await Promise.all([
      rig.redisKeys('shadowed'),
      rig.redisKeys('twin'),
      rig.redisKeys('candidate'),
    ]);
    expect(shadowedKeys.length).toBeGreaterThan(0);
    expect(shadowedKeys).toEqual(twinKeys);
    const [shadowedRows, twinRows, candidateRows] = [
      await rig.durableRows('shadowed'),
      await rig.durableRows('twin'),
      await rig.durableRows('candidate'),
    ];
    expect(shadowedRows).toEqual(twinRows);
    // balanced stashes too: the equal counts are of real entries (Redis `s:<id>`, stash_archive rows).
    expect(shadowedKeys.filter((k) => k.startsWith('s:')).length).toBeGreaterThan(0);
    expect(shadowedRows.stash_archive).toBeGreaterThan(0);
    // The candidate does stash when it is real: the counts above could have differed.
    expect(candidateKeys.filter((k) => k.startsWith('s:')).length).toBeGreaterThan(shadowedKeys.filter((k) => k.startsWith('s:')).length);
    expect(candidateRows.stash_archive).toBeGreaterThan(shadowedRows.stash_archive!);
  });

  it('reports the candidate’s would-be savings beside the active’s, on the same requests, in /stats and the admin API', async () => {
    const block = (await rig.stats('shadowed')).shadow;
    expect(block.candidate).toMatchObject({
      version: 1,
      sample: 1,
      pipeline: ['format', 'dedup', 'failed_run', 'mask', 'extract', 'cacheinject'],
    });
    const local = block.comparisons[0];
    expect(local).toMatchObject({ active_version: 2, candidate_version: 1, sampled: DIALECTS.length * TURNS });
    expect(local.evaluated + Object.values(local.dropped as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(local.sampled);
    expect(local.evaluated).toBeGreaterThan(TURNS);
    expect(local.saved.candidate).toBeGreaterThan(local.saved.active);
    expect(local.saved.active).toBeGreaterThan(0);
    // Components only the candidate runs (mask, extract) acted for it and never for the active side.
    const candidateOnly = (local.components as Array<{ component: string; active: number; candidate: number }>).filter(
      (c) => !['format', 'dedup', 'failed_run', 'cmdfilter', 'cacheinject'].includes(c.component),
    );
    expect(candidateOnly.every((c) => c.active === 0)).toBe(true);
    expect(candidateOnly.some((c) => c.candidate > 0)).toBe(true);
    const api = await rig.admin('GET', '/v1/tenants/shadowed/shadow');
    expect(api.status).toBe(200);
    expect(api.json).toMatchObject({ tenant: 'shadowed', active_version: 2, candidate: { version: 1, sample: 1 } });
    const { first_at, updated_at, ...shared } = api.json.comparisons[0];
    expect(shared).toEqual(local);
    expect(Date.parse(updated_at)).toBeGreaterThanOrEqual(Date.parse(first_at));
    expect((await rig.stats('twin')).shadow).toEqual({ candidate: null, comparisons: [] });
  });

  it('is shed under a burst: drops are counted and the candidate never runs while a real request compresses', async () => {
    const gw = rig.gateway.gw;
    const pipeline = gw.tenancy.directory.entry('shadowed')!.runtime.shadow!.runtime.built.pipeline;
    const occupiedAtRun: number[] = [];
    const run = pipeline.run.bind(pipeline);
    pipeline.run = (...args) => {
      occupiedAtRun.push(gw.compression.occupied);
      return run(...args);
    };
    const before = gw.shadow.ledger.pairs('shadowed')[0]!.counts;
    const snapshot = { sampled: before.sampled, evaluated: before.evaluated, dropped: { ...before.dropped } };
    const steps = agentSteps(24, 41);
    const burst = Array.from({ length: 16 }, (_, i) => ({ dialect: (i % 2 ? 'anthropic' : 'openai') as RigDialect, i }));
    const out = await Promise.all(
      burst.map(({ dialect, i }) => rig.post('shadowed', dialect, `burst-${i}`, turnBody(dialect, steps, 12 + (i % 6)))),
    );
    await Promise.all(burst.map(({ dialect, i }) => rig.post('twin', dialect, `burst-${i}`, turnBody(dialect, steps, 12 + (i % 6)))));
    await rig.settleShadow();
    pipeline.run = run;
    // What the burst forwarded depends on the compression gate (shed turns), not on shadow: it is
    // checked for provider validity here; byte identity with shadow off is the calm replay's.
    for (const raw of out) expect(validateProviderShape(raw.includes('"tool_use"') ? 'anthropic' : 'openai', JSON.parse(raw))).toEqual([]);
    const after = gw.shadow.ledger.pairs('shadowed')[0]!.counts;
    const dropped = Object.values(after.dropped).reduce((a, b) => a + b, 0) - Object.values(snapshot.dropped).reduce((a, b) => a + b, 0);
    expect(after.sampled - snapshot.sampled).toBe(burst.length);
    expect(after.evaluated - snapshot.evaluated + dropped).toBe(burst.length);
    expect(dropped).toBeGreaterThan(0);
    expect((after.dropped.busy ?? 0) + (after.dropped.queue_full ?? 0)).toBeGreaterThan(
      (snapshot.dropped.busy ?? 0) + (snapshot.dropped.queue_full ?? 0),
    );
    expect(occupiedAtRun.every((n) => n === 0)).toBe(true);
    const metrics = await (await fetch(`${rig.gateway.url}/metrics`)).text();
    expect(metrics).toMatch(/cg_shadow_dropped_total\{tenant="shadowed",reason="(busy|queue_full)"\} [1-9]/);
  });
});
