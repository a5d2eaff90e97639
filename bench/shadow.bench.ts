// Shadow evaluation over a replay: the billing benchmark's sessions (generated agent sessions and
// model-shaped trajectories, both dialects) go through a real gateway (real Redis, Postgres, the
// admin API) as three tenants — `shadowed` serves ACTIVE with CANDIDATE's stored version in shadow
// at sample 1, `twin` serves ACTIVE alone, `candidate` serves CANDIDATE for real. It prints what
// shadow reported (sampled / evaluated / dropped, tokens removed by each side on the same requests,
// read back from GET /v1/tenants/shadowed/shadow), what the candidate removed when it really served
// the same sessions, whether every forwarded body of `shadowed` was byte-identical to `twin`'s,
// and the gateway's own added time for `shadowed` against `twin` in the same run (a ratio).
// Needs DATABASE_URL (loopback default) and redis-server on PATH.
import { startPrivateRedis } from '../test/support/replicas';
import { startShadowRig, type RigDialect, type ShadowRig } from '../test/support/shadow-rig';
import { billingSessions } from './billing.bench';
import { table } from './bench-util';

const ACTIVE = { preset: 'balanced' };
const CANDIDATE = { preset: 'agent' };

interface Phase {
  dialect: RigDialect;
  turns: number;
  identical: number;
  comparison: Record<string, any>;
  real: { before: number; after: number };
  addedMs: { shadowed: number; twin: number };
}

const pct = (saved: number, before: number) => (before > 0 ? `${((saved / before) * 100).toFixed(1)}%` : '—');
const k = (n: number) => `${(n / 1000).toFixed(0)}k`;

async function replay(rig: ShadowRig, dialect: RigDialect): Promise<Omit<Phase, 'comparison' | 'real' | 'addedMs'>> {
  let turns = 0;
  let identical = 0;
  for (const spec of billingSessions()) {
    const session = `${spec.name}-${dialect}`;
    for (let t = 1; t <= spec.turns; t++) {
      const body = spec.body(dialect, t);
      const twin = await rig.post('twin', dialect, session, body);
      const shadowed = await rig.post('shadowed', dialect, session, body);
      await rig.post('candidate', dialect, session, body);
      turns++;
      if (twin === shadowed) identical++;
    }
  }
  return { dialect, turns, identical };
}

export async function runShadow(): Promise<string> {
  const redis = await startPrivateRedis();
  const rig = await startShadowRig({ active: ACTIVE, candidate: CANDIDATE, sample: 1, redisUrl: redis.url });
  const phases: Phase[] = [];
  try {
    let prev = {
      comparison: undefined as Record<string, any> | undefined,
      real: { before: 0, after: 0 },
      added: { shadowed: 0, twin: 0 },
      n: 0,
    };
    for (const dialect of ['anthropic', 'openai'] as const) {
      const r = await replay(rig, dialect);
      await rig.settleShadow();
      const api = await rig.admin('GET', '/v1/tenants/shadowed/shadow');
      const total = api.json.comparisons[0] as Record<string, any>;
      const real = await rig.stats('candidate');
      const added = { shadowed: await addedSum(rig, 'shadowed'), twin: await addedSum(rig, 'twin') };
      const n = prev.n + r.turns;
      phases.push({
        ...r,
        comparison: minus(total, prev.comparison),
        real: { before: real.tokens_before - prev.real.before, after: real.tokens_after - prev.real.after },
        addedMs: { shadowed: (added.shadowed - prev.added.shadowed) / r.turns, twin: (added.twin - prev.added.twin) / r.turns },
      });
      prev = { comparison: total, real: { before: real.tokens_before, after: real.tokens_after }, added, n };
    }
  } finally {
    await rig.close();
    await redis.stop();
  }
  const rows = phases.map((p) => {
    const c = p.comparison;
    const dropped = Object.entries(c.dropped as Record<string, number>)
      .filter(([, n]) => n > 0)
      .map(([why, n]) => `${why} ${n}`);
    return [
      p.dialect,
      String(p.turns),
      `${c.sampled} / ${c.evaluated} / ${dropped.length ? dropped.join(', ') : 0}`,
      k(c.tokens.before),
      `${k(c.saved.active)} (${pct(c.saved.active, c.tokens.before)})`,
      `${k(c.saved.candidate)} (${pct(c.saved.candidate, c.tokens.before)})`,
      `${k(p.real.before - p.real.after)} (${pct(p.real.before - p.real.after, p.real.before)})`,
      `${p.identical}/${p.turns}`,
      `${(p.addedMs.shadowed / Math.max(1e-9, p.addedMs.twin)).toFixed(2)}×`,
    ];
  });
  return [
    `Tenant on \`${ACTIVE.preset}\` with \`${CANDIDATE.preset}\`'s stored version in shadow (sample 1), over the billing sessions (${billingSessions().length} per dialect).`,
    '',
    table(
      [
        'dialect',
        'turns',
        'sampled / evaluated / dropped',
        'tokens before (evaluated)',
        `active (${ACTIVE.preset}) removed`,
        `candidate (${CANDIDATE.preset}) would remove`,
        `${CANDIDATE.preset} serving for real removed`,
        'forwarded bytes identical to no-shadow',
        'added time shadowed / no-shadow',
      ],
      rows,
    ),
  ].join('\n');
}

/** The tenant's summed added milliseconds so far (its /stats average times its requests). */
async function addedSum(rig: ShadowRig, tenant: 'shadowed' | 'twin'): Promise<number> {
  const s = await rig.stats(tenant);
  return (s.cg_added_ms_avg ?? 0) * (s.requests ?? 0);
}

/** Comparison counts of this phase: the running total minus the one before it. */
function minus(now: Record<string, any>, before: Record<string, any> | undefined): Record<string, any> {
  if (!before) return now;
  const sub = (a: Record<string, number>, b: Record<string, number>) =>
    Object.fromEntries(Object.entries(a).map(([key, v]) => [key, v - (b[key] ?? 0)]));
  return {
    sampled: now.sampled - before.sampled,
    evaluated: now.evaluated - before.evaluated,
    dropped: sub(now.dropped, before.dropped),
    tokens: sub(now.tokens, before.tokens),
    saved: { active: now.saved.active - before.saved.active, candidate: now.saved.candidate - before.saved.candidate },
  };
}
