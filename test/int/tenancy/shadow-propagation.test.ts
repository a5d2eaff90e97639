// The shadow setting propagates like the rest of a tenant's document: two gateway processes on one
// control plane (real Postgres + Redis) pick up a version naming a shadow candidate, build the
// candidate (/readyz lists it), evaluate it on their traffic, and each adds its figures to
// shadow_tallies so the shared sum is both replicas' /stats together; a later version without a
// shadow stops it everywhere.
import { shadowTalliesRepository } from '@context-guru/storage';
import type { ControlSeed } from '../../support/control-seed';
import type { Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { postTurn, readyz, startTenantReplicas, waitGeneration, type TenantReplicas } from '../../support/tenant-replicas';
import { agentSteps, anthropicTurn, openaiTurn } from '../../support/transcripts';

jest.setTimeout(240_000);

const AGENT = ['format', 'dedup', 'failed_run', 'mask', 'extract', 'cacheinject'];
const TURNS = 4;

let rig: TenantReplicas | undefined;
let seed: ControlSeed;
let replicas: Replica[] = [];
let key = '';

beforeAll(async () => {
  rig = await startTenantReplicas({
    name: 'shadowprop',
    script: jsonScript({ expand: false }),
    replicas: 2,
    seedWith: async (s) => {
      await s.createTenant('team', { preset: 'agent' });
      await s.pushConfig('team', { preset: 'safe' });
      key = (await s.issueKey('team')).key;
    },
  });
  ({ seed, replicas } = rig);
});

afterAll(() => rig?.close());

const teamConfig = async (r: Replica) => (await readyz(r)).body.config.find((c) => c.tenant === 'team') as Record<string, unknown>;
const shadowStats = async (r: Replica) => {
  const res = await fetch(`${r.url}/stats`, { headers: { 'x-context-guru-key': key } });
  return ((await res.json()) as { shadow: { comparisons: Array<{ sampled: number; evaluated: number; tokens: { before: number } }> } })
    .shadow;
};

it('a version naming a shadow candidate reaches every replica, which builds the candidate', async () => {
  for (const r of replicas) expect(await teamConfig(r)).not.toHaveProperty('shadow');
  const { version, generation } = await seed.pushConfig('team', { preset: 'safe', shadow: { version: 1, sample: 1 } });
  await Promise.all(replicas.map((r) => waitGeneration(r, generation)));
  for (const r of replicas) {
    expect(await teamConfig(r)).toEqual({
      tenant: 'team',
      version,
      pipeline: ['format', 'cacheinject'],
      shadow: { version: 1, sample: 1, pipeline: AGENT },
    });
  }
});

it('each replica evaluates its own traffic; shadow_tallies holds both replicas’ sums', async () => {
  const steps = agentSteps(TURNS * 3, 9);
  for (let t = 3; t <= TURNS * 3; t += 3) {
    expect(
      (await postTurn(replicas[0]!, 'openai', openaiTurn(steps, t), { 'x-context-guru-key': key, 'x-context-guru-session': 'p-o' })).status,
    ).toBe(200);
    expect(
      (await postTurn(replicas[1]!, 'anthropic', anthropicTurn(steps, t), { 'x-context-guru-key': key, 'x-context-guru-session': 'p-a' }))
        .status,
    ).toBe(200);
  }
  let local: Array<{ sampled: number; evaluated: number; tokens: { before: number } }> = [];
  // Each replica evaluates after answering: wait until both have accounted for every turn.
  for (let i = 0; i < 200; i++) {
    local = (await Promise.all(replicas.map(shadowStats))).map((s) => s.comparisons[0]!).filter(Boolean);
    if (local.length === 2 && local.every((c) => c.sampled === TURNS)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(local.map((c) => c.sampled)).toEqual([TURNS, TURNS]);
  const sum = (f: (c: (typeof local)[number]) => number) => local.reduce((a, c) => a + f(c), 0);
  // Flushed every 2 s by each replica.
  let tally;
  for (let i = 0; i < 100; i++) {
    [tally] = await shadowTalliesRepository.list(seed.sql, 'team');
    if (tally && tally.sampled === 2 * TURNS && tally.evaluated === sum((c) => c.evaluated)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(tally).toMatchObject({
    tenant: 'team',
    activeVersion: 3,
    candidateVersion: 1,
    sampled: 2 * TURNS,
    evaluated: sum((c) => c.evaluated),
  });
  expect(tally!.evaluated).toBeGreaterThan(0);
  expect(tally!.tokensBefore).toBe(sum((c) => c.tokens.before));
  expect(tally!.tokensAfterCandidate).toBeLessThan(tally!.tokensAfterActive);
});

it('a later version without a shadow stops it on every replica', async () => {
  const { generation } = await seed.pushConfig('team', { preset: 'safe' });
  await Promise.all(replicas.map((r) => waitGeneration(r, generation)));
  for (const r of replicas) expect(await teamConfig(r)).not.toHaveProperty('shadow');
  const before = (await Promise.all(replicas.map(shadowStats))).map((s) => s.comparisons.reduce((a, c) => a + c.sampled, 0));
  const steps = agentSteps(6, 10);
  for (const r of replicas) expect((await postTurn(r, 'openai', openaiTurn(steps, 6), { 'x-context-guru-key': key })).status).toBe(200);
  const after = await Promise.all(replicas.map(shadowStats));
  expect(after.map((s) => s.comparisons.reduce((a, c) => a + c.sampled, 0))).toEqual(before);
  expect(after.map((s) => (s as { candidate?: unknown }).candidate)).toEqual([null, null]);
});
