// The JSON the API answers for each record (snake_case on the wire, like the rest of the project).
import type { ApiKeyRecord, AuditRecord, ConfigVersion, FilterVersion, ReplicaRecord, TenantRecord } from '@context-guru/storage';

export const tenantView = (t: TenantRecord) => ({
  id: t.id,
  name: t.name,
  created_at: t.createdAt.toISOString(),
  disabled: t.disabledAt !== null,
  disabled_at: t.disabledAt?.toISOString() ?? null,
  generation: t.generation,
});

export const keyView = (k: ApiKeyRecord) => ({
  id: k.id,
  prefix: k.prefix,
  role: k.role,
  label: k.label,
  created_at: k.createdAt.toISOString(),
  created_by: k.createdBy,
  revoked: k.revokedAt !== null,
  revoked_at: k.revokedAt?.toISOString() ?? null,
});

export const configView = (v: ConfigVersion) => ({
  version: v.version,
  active: v.active,
  created_at: v.createdAt.toISOString(),
  created_by: v.createdBy,
  document: v.document,
});

export const filterView = (f: FilterVersion) => ({
  name: f.name,
  version: f.version,
  active: f.active,
  created_at: f.createdAt.toISOString(),
  created_by: f.createdBy,
  yaml: f.yaml,
});

export const auditView = (a: AuditRecord) => ({
  id: a.id,
  at: a.at.toISOString(),
  actor: a.actor,
  action: a.action,
  tenant: a.tenant,
  target: a.target,
  reason: a.reason,
  before: a.before,
  after: a.after,
  detail: a.detail,
  prev_hash: a.prevHash,
  hash: a.hash,
});

export const replicaView = (r: ReplicaRecord) => ({
  id: r.id,
  started_at: r.startedAt.toISOString(),
  heartbeat_at: r.heartbeatAt.toISOString(),
  generation: r.generation,
  tenant_versions: r.tenantVersions,
  last_propagation_ms: r.lastPropagationMs,
});
