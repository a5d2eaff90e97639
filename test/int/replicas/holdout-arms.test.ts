// The holdout arm of a session across three replicas sharing Redis and Postgres: deterministic
// from the session key, the same whichever replica serves a turn, unchanged by two Redis FLUSHALLs,
// by turning the holdout on (sessions already known stay treated) and by raising the fraction
// (only new sessions follow it). A holdout turn goes upstream as the client's bytes; the figures
// every replica adds land in holdout_sessions under the version that served each turn.
import { holdoutSessionsRepository } from '@context-guru/storage';
import { Redis } from 'ioredis';
import { armPoint } from '../../../libs/engine/src/session/arm';
import { randomBytes } from 'node:crypto';
import { deploymentKeys } from '../../support/forwarded-bytes';
import type { ControlSeed } from '../../support/control-seed';
import type { FakeUpstream } from '../../support/fake-upstream';
import type { Replica } from '../../support/replicas';
import { jsonScript } from '../../support/scripted-model';
import { postTurn, startTenantReplicas, waitGeneration, type TenantReplicas } from '../../support/tenant-replicas';
import { agentSteps, anthropicTurn } from '../../support/transcripts';

jest.setTimeout(300_000);

const PIPELINE = { pipeline: ['cacheinject', 'format', 'dedup', 'collapse', 'mask'], components: { mask: { keep_recent: 2 } } };
const steps = agentSteps(20, 61);
const point = (id: string) => armPoint('team', `team:${id}`);
/** Ids whose point lies in [lo, hi): the arm each would get as a new session is then known. */
function ids(prefix: string, n: number, lo: number, hi: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (point(`${prefix}-${i}`) >= lo && point(`${prefix}-${i}`) < hi) out.push(`${prefix}-${i}`);
  return out;
}

let rig: TenantReplicas | undefined;
let seed: ControlSeed;
let redisUrl = '';
let upstream: FakeUpstream;
let replicas: Replica[] = [];
let key = '';
let served = 0;
/** session → the arm each of its turns was forwarded as ('holdout' = the client's bytes). */
const seen = new Map<string, string[]>();

async function turn(session: string, t: number): Promise<void> {
  const raw = anthropicTurn(steps, 2 + t * 2);
  const before = upstream.requests.length;
  const res = await postTurn(replicas[served++ % replicas.length]!, 'anthropic', raw, {
    'x-context-guru-key': key,
    'x-context-guru-session': session,
  });
  expect(res.status).toBe(200);
  await res.text();
  const sent = upstream.requests[before]!.raw;
  seen.set(session, [...(seen.get(session) ?? []), sent === JSON.stringify(raw) ? 'holdout' : 'treated']);
}

async function push(document: object): Promise<number> {
  const { version, generation } = await seed.pushConfig('team', document);
  await Promise.all(replicas.map((r) => waitGeneration(r, generation)));
  return version;
}

async function flushAll(): Promise<void> {
  // Let the write-behind queues reach Postgres first (50 ms batches), as a real outage would find them.
  await new Promise((r) => setTimeout(r, 500));
  const r = new Redis(redisUrl);
  await r.flushall();
  await r.quit();
}

// Known before the holdout (would be held out if new), new under 0.3 (both arms), new under 0.9.
const early = ids('early', 6, 0, 0.3);
const mid = [...ids('mid', 8, 0, 0.3), ...ids('mid', 8, 0.3, 0.9), ...ids('mid', 4, 0.9, 1)];
const late = [...ids('late', 6, 0.3, 0.9), ...ids('late', 3, 0.9, 1)];
const versions: Record<string, number> = {};
const KEK = randomBytes(32).toString('base64');

beforeAll(async () => {
  rig = await startTenantReplicas({
    name: 'holdout',
    script: jsonScript({ expand: false }),
    replicas: 3,
    // Holdout rows name sessions as traces do, keyed with the tenant's key: read from outside with it.
    env: { CG_ENCRYPTION_KEY: KEK },
    seedWith: async (s) => {
      await s.createTenant('team', PIPELINE);
      key = (await s.issueKey('team')).key;
    },
  });
  ({ seed, upstream, replicas } = rig);
  redisUrl = rig.redis.url;

  for (const s of early) await turn(s, 1);
  versions.on = await push({ ...PIPELINE, holdout: { fraction: 0.3 } });
  for (const t of [1, 2]) for (const s of mid) await turn(s, t);
  for (const s of early) await turn(s, 2);
  await flushAll();
  for (const t of [3, 4]) for (const s of mid) await turn(s, t);
  for (const s of early) await turn(s, 3);
  versions.raised = await push({ ...PIPELINE, holdout: { fraction: 0.9 } });
  for (const s of [...mid, ...late]) await turn(s, s.startsWith('late') ? 1 : 5);
  await flushAll();
  for (const s of [...mid, ...late]) await turn(s, s.startsWith('late') ? 2 : 6);
  for (const s of early) await turn(s, 4);
});

afterAll(() => rig?.close());

it('a session never switches arm: every turn, on any replica, before and after each flush and fraction change', () => {
  for (const [session, arms] of seen) expect([session, new Set(arms).size]).toEqual([session, 1]);
});

it('new sessions are held out exactly when their point is below the fraction active at their first turn', () => {
  const arm = (s: string) => seen.get(s)![0];
  expect(mid.map((s) => [s, arm(s)])).toEqual(mid.map((s) => [s, point(s) < 0.3 ? 'holdout' : 'treated']));
  expect(late.map((s) => [s, arm(s)])).toEqual(late.map((s) => [s, point(s) < 0.9 ? 'holdout' : 'treated']));
  // Known before the holdout was turned on: treated, though each would have been held out as new.
  expect(early.map((s) => arm(s))).toEqual(early.map(() => 'treated'));
  expect(mid.filter((s) => point(s) >= 0.3 && point(s) < 0.9).every((s) => arm(s) === 'treated')).toBe(true);
});

it('every replica adds its turns to holdout_sessions, under the version that served them, with the same arm', async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  const rows = await holdoutSessionsRepository.list(seed.sql, 'team');
  const outside = deploymentKeys(seed.dbUrl, KEK);
  const keys = await outside.keys.forTenant('team');
  await outside.close();
  const sessionHash = (session: string) => keys.name('trace', session);
  const bySession = new Map(rows.map((r) => [`${r.version}:${r.session}`, r]));
  for (const s of mid) {
    const on = bySession.get(`${versions.on}:${sessionHash(`team:${s}`)}`);
    const raised = bySession.get(`${versions.raised}:${sessionHash(`team:${s}`)}`);
    expect([s, on?.arm, on?.turns, raised?.arm, raised?.turns]).toEqual([s, seen.get(s)![0], 4, seen.get(s)![0], 2]);
  }
  for (const s of early) expect(bySession.get(`${versions.raised}:${sessionHash(`team:${s}`)}`)?.turns).toBe(1);
  expect(rows.every((r) => r.billedUsd > 0 && r.inputTokens > 0)).toBe(true);
});
