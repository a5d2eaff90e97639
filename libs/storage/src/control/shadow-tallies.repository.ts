// shadow_tallies: what a tenant's candidate config version would have done beside its active one,
// summed over every replica (each adds its deltas in one statement per flush). GET
// /v1/tenants/{id}/shadow reads it. Bounded: each tenant keeps its newest pairs only.
import { col, type Row, type SqlQueryable } from '../sql/sql-client';

/** Counts that add up: a replica's delta since its last flush, or a pair's running total. */
export interface ShadowCounts {
  /** Requests picked by the sample (evaluated + dropped). */
  sampled: number;
  evaluated: number;
  /** reason → requests sampled but not evaluated. */
  dropped: Record<string, number>;
  /** Over evaluated requests only: the body's tokens, and after each pipeline. */
  tokensBefore: number;
  tokensAfterActive: number;
  tokensAfterCandidate: number;
  /** component → evaluated requests on which it removed tokens, per side. */
  actedActive: Record<string, number>;
  actedCandidate: Record<string, number>;
}

/** Counts of nothing yet, optionally with some filled in. */
export const shadowCounts = (o: Partial<ShadowCounts> = {}): ShadowCounts => ({
  sampled: 0,
  evaluated: 0,
  dropped: {},
  tokensBefore: 0,
  tokensAfterActive: 0,
  tokensAfterCandidate: 0,
  actedActive: {},
  actedCandidate: {},
  ...o,
});

export interface ShadowPair {
  tenant: string;
  activeVersion: number;
  candidateVersion: number;
}

export interface ShadowTally extends ShadowPair, ShadowCounts {
  firstAt: Date;
  updatedAt: Date;
}

/** Version pairs kept per tenant (the most recently updated); older comparisons are dropped. */
export const SHADOW_PAIRS_KEPT = 20;

const COLUMNS = `tenant, active_version, candidate_version, sampled, evaluated, dropped, tokens_before, tokens_after_active,
  tokens_after_candidate, acted_active, acted_candidate, first_at, updated_at`;

const counts = (v: unknown): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries((v ?? {}) as Record<string, unknown>)) out[k] = Number(n);
  return out;
};

function toTally(r: Row): ShadowTally {
  return {
    tenant: col.str(r, 'tenant'),
    activeVersion: col.num(r, 'active_version'),
    candidateVersion: col.num(r, 'candidate_version'),
    sampled: col.num(r, 'sampled'),
    evaluated: col.num(r, 'evaluated'),
    dropped: counts(r.dropped),
    tokensBefore: col.num(r, 'tokens_before'),
    tokensAfterActive: col.num(r, 'tokens_after_active'),
    tokensAfterCandidate: col.num(r, 'tokens_after_candidate'),
    actedActive: counts(r.acted_active),
    actedCandidate: counts(r.acted_candidate),
    firstAt: col.date(r, 'first_at'),
    updatedAt: col.date(r, 'updated_at'),
  };
}

export const shadowTalliesRepository = {
  /** Adds each delta to its pair's total (one statement), then trims each tenant to its newest pairs. */
  async add(c: SqlQueryable, deltas: ReadonlyArray<ShadowPair & ShadowCounts>, keep: number = SHADOW_PAIRS_KEPT): Promise<void> {
    if (deltas.length === 0) return;
    const pick = <T>(f: (d: ShadowPair & ShadowCounts) => T) => deltas.map(f);
    await c.query(
      `INSERT INTO shadow_tallies (tenant, active_version, candidate_version, sampled, evaluated, dropped, tokens_before,
         tokens_after_active, tokens_after_candidate, acted_active, acted_candidate)
       SELECT t, a, v, s, e, d::jsonb, tb, ta, tc, aa::jsonb, ac::jsonb
         FROM unnest($1::text[], $2::int[], $3::int[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[], $8::bigint[],
                     $9::bigint[], $10::text[], $11::text[]) AS b(t, a, v, s, e, d, tb, ta, tc, aa, ac)
       ON CONFLICT (tenant, active_version, candidate_version) DO UPDATE SET
         sampled = shadow_tallies.sampled + EXCLUDED.sampled,
         evaluated = shadow_tallies.evaluated + EXCLUDED.evaluated,
         dropped = cg_jsonb_add(shadow_tallies.dropped, EXCLUDED.dropped),
         tokens_before = shadow_tallies.tokens_before + EXCLUDED.tokens_before,
         tokens_after_active = shadow_tallies.tokens_after_active + EXCLUDED.tokens_after_active,
         tokens_after_candidate = shadow_tallies.tokens_after_candidate + EXCLUDED.tokens_after_candidate,
         acted_active = cg_jsonb_add(shadow_tallies.acted_active, EXCLUDED.acted_active),
         acted_candidate = cg_jsonb_add(shadow_tallies.acted_candidate, EXCLUDED.acted_candidate),
         updated_at = now()`,
      [
        pick((d) => d.tenant),
        pick((d) => d.activeVersion),
        pick((d) => d.candidateVersion),
        pick((d) => d.sampled),
        pick((d) => d.evaluated),
        pick((d) => JSON.stringify(d.dropped)),
        pick((d) => d.tokensBefore),
        pick((d) => d.tokensAfterActive),
        pick((d) => d.tokensAfterCandidate),
        pick((d) => JSON.stringify(d.actedActive)),
        pick((d) => JSON.stringify(d.actedCandidate)),
      ],
    );
    await c.query(
      `DELETE FROM shadow_tallies s USING (
         SELECT tenant, active_version, candidate_version,
                row_number() OVER (PARTITION BY tenant ORDER BY updated_at DESC, active_version DESC, candidate_version DESC) AS rank
           FROM shadow_tallies WHERE tenant = ANY($1::text[])) old
        WHERE old.rank > $2 AND s.tenant = old.tenant AND s.active_version = old.active_version
          AND s.candidate_version = old.candidate_version`,
      [[...new Set(pick((d) => d.tenant))], keep],
    );
  },

  /** The tenant's comparisons, newest first. */
  async list(c: SqlQueryable, tenant: string): Promise<ShadowTally[]> {
    const rows = await c.query(`SELECT ${COLUMNS} FROM shadow_tallies WHERE tenant = $1 ORDER BY updated_at DESC, active_version DESC`, [
      tenant,
    ]);
    return rows.map(toTally);
  },
};
