-- Control-plane tables (apps/admin): tenants, hashed API keys, versioned pipeline configs and
-- filter sets, and the audit log. Portable SQL for PostgreSQL 15 and PGlite (PostgreSQL 18):
-- gen_random_uuid() is core since PG 13, so no pgcrypto extension is needed.

CREATE TABLE tenants (
  id          text        PRIMARY KEY,
  name        text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  disabled_at timestamptz
);

-- Keys are shown once and stored only as SHA-256 (hex); the prefix identifies a key in listings.
CREATE TABLE api_keys (
  id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  key_hash    text        NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  prefix      text        NOT NULL,
  role        text        NOT NULL CHECK (role IN ('admin', 'operator', 'viewer', 'tenant')),
  tenant      text        REFERENCES tenants (id) ON DELETE CASCADE,
  label       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text,
  revoked_at  timestamptz,
  -- Tenant keys authenticate a tenant's traffic; admin keys (admin/operator/viewer) have none.
  CHECK ((role = 'tenant') = (tenant IS NOT NULL))
);
CREATE INDEX api_keys_tenant_idx ON api_keys (tenant);

-- One row per version of a tenant's pipeline document; exactly one active version per tenant.
CREATE TABLE pipeline_configs (
  tenant      text        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  version     integer     NOT NULL CHECK (version > 0),
  document    jsonb       NOT NULL,
  created_by  text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  active      boolean     NOT NULL DEFAULT false,
  PRIMARY KEY (tenant, version)
);
CREATE UNIQUE INDEX pipeline_configs_one_active ON pipeline_configs (tenant) WHERE active;

-- cmdfilter DSL documents, versioned per (tenant, name) like pipeline configs.
CREATE TABLE filter_sets (
  tenant      text        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name        text        NOT NULL,
  version     integer     NOT NULL CHECK (version > 0),
  yaml        text        NOT NULL,
  created_by  text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  active      boolean     NOT NULL DEFAULT false,
  PRIMARY KEY (tenant, name, version)
);
CREATE UNIQUE INDEX filter_sets_one_active ON filter_sets (tenant, name) WHERE active;

-- Append-only record of every change and every operator expand.
CREATE TABLE audit_log (
  id          bigserial   PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT now(),
  actor       text        NOT NULL,
  action      text        NOT NULL,
  tenant      text,
  target      text,
  detail      jsonb       NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_tenant_at_idx ON audit_log (tenant, at DESC);
CREATE INDEX audit_log_at_idx ON audit_log (at DESC);
