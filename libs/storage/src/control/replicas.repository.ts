// gateway_replicas: each gateway replica upserts its own row on every heartbeat; GET /v1/replicas
// lists the ones heard from recently (a replica that stopped heartbeating is not live).
import { col, type Row, type SqlQueryable } from '../sql/sql-client';

export interface ReplicaRecord {
  id: string;
  startedAt: Date;
  heartbeatAt: Date;
  generation: number;
  /** tenant → active config version applied. */
  tenantVersions: Record<string, number>;
  lastPropagationMs: number | null;
}

export interface ReplicaHeartbeat {
  id: string;
  startedAt: Date;
  generation: number;
  tenantVersions: Record<string, number>;
  lastPropagationMs?: number | null;
}

/** Replicas silent for longer than this are not listed (heartbeats come every few seconds). */
export const REPLICA_LIVE_MS = 30_000;

function toReplica(r: Row): ReplicaRecord {
  return {
    id: col.str(r, 'id'),
    startedAt: col.date(r, 'started_at'),
    heartbeatAt: col.date(r, 'heartbeat_at'),
    generation: col.num(r, 'generation'),
    tenantVersions: (r.tenant_versions ?? {}) as Record<string, number>,
    lastPropagationMs: r.last_propagation_ms == null ? null : col.num(r, 'last_propagation_ms'),
  };
}

export const replicasRepository = {
  async heartbeat(c: SqlQueryable, h: ReplicaHeartbeat): Promise<void> {
    await c.query(
      `INSERT INTO gateway_replicas (id, started_at, heartbeat_at, generation, tenant_versions, last_propagation_ms)
       VALUES ($1, $2, now(), $3, $4::jsonb, $5)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), generation = EXCLUDED.generation,
         tenant_versions = EXCLUDED.tenant_versions,
         last_propagation_ms = COALESCE(EXCLUDED.last_propagation_ms, gateway_replicas.last_propagation_ms)`,
      [h.id, h.startedAt, h.generation, JSON.stringify(h.tenantVersions), h.lastPropagationMs ?? null],
    );
  },

  /**
   * A heartbeat whose tenant versions did not change: only the time, generation and propagation
   * are written, so the (possibly large, TOASTed) tenant map is not rewritten every second.
   * False when the row is gone (removed, or purged as dead): then heartbeat() writes it whole.
   */
  async touch(c: SqlQueryable, h: Omit<ReplicaHeartbeat, 'startedAt' | 'tenantVersions'>): Promise<boolean> {
    const rows = await c.query(
      `UPDATE gateway_replicas SET heartbeat_at = now(), generation = $2,
         last_propagation_ms = COALESCE($3, last_propagation_ms)
       WHERE id = $1 RETURNING 1 AS hit`,
      [h.id, h.generation, h.lastPropagationMs ?? null],
    );
    return rows.length > 0;
  },

  async live(c: SqlQueryable, withinMs: number = REPLICA_LIVE_MS): Promise<ReplicaRecord[]> {
    const rows = await c.query(
      `SELECT id, started_at, heartbeat_at, generation, tenant_versions, last_propagation_ms FROM gateway_replicas
       WHERE heartbeat_at > now() - make_interval(secs => $1::double precision) ORDER BY id`,
      [withinMs / 1000],
    );
    return rows.map(toReplica);
  },

  async remove(c: SqlQueryable, id: string): Promise<void> {
    await c.query('DELETE FROM gateway_replicas WHERE id = $1', [id]);
  },
};
