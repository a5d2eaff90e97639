// holdout_sessions: each session's provider-billed cost per tenant and config version, with its
// arm and the input tokens its client sent, summed over every replica (each adds its deltas in one
// statement per flush). GET /v1/tenants/{id}/savings and the gateway's /stats read it. Bounded:
// each version keeps its most recently updated sessions, each tenant its newest versions.
import type { Arm } from '@context-guru/components';
import { col, type Row, type SqlQueryable } from '../sql/sql-client';

/** What a session cost on one config version: a replica's delta, or the summed row. */
export interface HoldoutSessionCost {
  tenant: string;
  version: number;
  /** A hash of the session key (never the key itself). */
  session: string;
  arm: Arm;
  billedUsd: number;
  inputTokens: number;
  turns: number;
}

export interface HoldoutBounds {
  /** Sessions kept per tenant and version (the most recently updated). */
  sessions: number;
  /** Versions kept per tenant (the highest). */
  versions: number;
}

export const HOLDOUT_BOUNDS: HoldoutBounds = { sessions: 5000, versions: 10 };

function toCost(r: Row): HoldoutSessionCost {
  const arm = col.str(r, 'arm');
  return {
    tenant: col.str(r, 'tenant'),
    version: col.num(r, 'version'),
    session: col.str(r, 'session'),
    arm: arm === 'holdout' ? 'holdout' : 'treated',
    billedUsd: col.num(r, 'billed_usd'),
    inputTokens: col.num(r, 'input_tokens'),
    turns: col.num(r, 'turns'),
  };
}

export const holdoutSessionsRepository = {
  /** Adds each delta to its session's row (one statement); a session's first arm stays. */
  async add(c: SqlQueryable, deltas: readonly HoldoutSessionCost[]): Promise<void> {
    if (deltas.length === 0) return;
    const pick = <T>(f: (d: HoldoutSessionCost) => T) => deltas.map(f);
    await c.query(
      `INSERT INTO holdout_sessions (tenant, version, session, arm, billed_usd, input_tokens, turns)
       SELECT t, v, s, a, u, i, n
         FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::float8[], $6::bigint[], $7::int[]) AS b(t, v, s, a, u, i, n)
       ON CONFLICT (tenant, version, session) DO UPDATE SET
         billed_usd = holdout_sessions.billed_usd + EXCLUDED.billed_usd,
         input_tokens = holdout_sessions.input_tokens + EXCLUDED.input_tokens,
         turns = holdout_sessions.turns + EXCLUDED.turns,
         updated_at = now()`,
      [
        pick((d) => d.tenant),
        pick((d) => d.version),
        pick((d) => d.session),
        pick((d) => d.arm),
        pick((d) => d.billedUsd),
        pick((d) => Math.round(d.inputTokens)),
        pick((d) => d.turns),
      ],
    );
  },

  /** Drops what is over the bounds for these tenants: older sessions of a version, older versions. */
  async trim(c: SqlQueryable, tenants: readonly string[], bounds: HoldoutBounds = HOLDOUT_BOUNDS): Promise<void> {
    if (tenants.length === 0) return;
    await c.query(
      `DELETE FROM holdout_sessions h USING (
         SELECT tenant, version, session,
                row_number() OVER (PARTITION BY tenant, version ORDER BY updated_at DESC, session DESC) AS rank,
                dense_rank() OVER (PARTITION BY tenant ORDER BY version DESC) AS vrank
           FROM holdout_sessions WHERE tenant = ANY($1::text[])) old
        WHERE (old.rank > $2 OR old.vrank > $3)
          AND h.tenant = old.tenant AND h.version = old.version AND h.session = old.session`,
      [[...new Set(tenants)], bounds.sessions, bounds.versions],
    );
  },

  /** The tenant's sessions on one version (all versions when absent), in a stable order. */
  async list(c: SqlQueryable, tenant: string, version?: number): Promise<HoldoutSessionCost[]> {
    const rows = await c.query(
      `SELECT tenant, version, session, arm, billed_usd, input_tokens, turns FROM holdout_sessions
        WHERE tenant = $1 AND ($2::int IS NULL OR version = $2) ORDER BY version DESC, arm, session`,
      [tenant, version ?? null],
    );
    return rows.map(toCost);
  },

  /** Versions of the tenant with measured sessions, newest first. */
  async versions(c: SqlQueryable, tenant: string): Promise<number[]> {
    const rows = await c.query('SELECT DISTINCT version FROM holdout_sessions WHERE tenant = $1 ORDER BY version DESC', [tenant]);
    return rows.map((r) => col.num(r, 'version'));
  },
};

/** Rows by version, newest version first; `seed` versions are listed even without a row. */
export function byVersion(rows: readonly HoldoutSessionCost[], seed: readonly number[] = []): Array<[number, HoldoutSessionCost[]]> {
  const out = new Map<number, HoldoutSessionCost[]>(seed.map((v) => [v, []]));
  for (const r of rows) {
    const list = out.get(r.version);
    if (list) list.push(r);
    else out.set(r.version, [r]);
  }
  return [...out].sort(([a], [b]) => b - a);
}
