-- Propagation of control-plane changes to gateway replicas (SPEC §6). The truth is a monotonic
-- generation: every admin write bumps it in the same transaction as the change and stamps the
-- tenant it touched, so a replica that has applied generation G reloads exactly the tenants whose
-- stamp is above G. Redis pub/sub only announces a new number; a poll of this row covers a lost one.

CREATE TABLE control_generation (
  id          smallint    PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  generation  bigint      NOT NULL DEFAULT 0,
  changed_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO control_generation (id, generation) VALUES (1, 0);

-- The generation of the last change that touched the tenant (config, filters, keys, disable).
ALTER TABLE tenants ADD COLUMN generation bigint NOT NULL DEFAULT 0;
CREATE INDEX tenants_generation_idx ON tenants (generation);

-- Each gateway replica heartbeats what it serves, for GET /v1/replicas.
CREATE TABLE gateway_replicas (
  id              text        PRIMARY KEY,
  started_at      timestamptz NOT NULL,
  heartbeat_at    timestamptz NOT NULL,
  generation      bigint      NOT NULL,
  -- {"<tenant>": <active config version>, ...}
  tenant_versions jsonb       NOT NULL DEFAULT '{}'::jsonb,
  -- when the replica applied each generation bump, milliseconds after the bump (propagation time)
  last_propagation_ms integer
);
