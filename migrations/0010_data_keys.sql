-- Envelope encryption at rest (docs/security.md): each scope (a tenant, `tenant:<id>`) has random
-- data keys, stored here only wrapped by the key-encryption key the processes hold outside the
-- database (CG_ENCRYPTION_KEY). Versions are only added (a rotation adds one); kek_id names the
-- KEK that wrapped a row, so a KEK rotation rewraps rows without touching the data they protect.
CREATE TABLE data_keys (
  scope      text        NOT NULL,
  version    integer     NOT NULL CHECK (version > 0),
  kek_id     text        NOT NULL,
  wrapped    bytea       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, version)
);
