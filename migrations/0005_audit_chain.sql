-- The audit log becomes a hash chain (SPEC §6): each row carries the previous row's hash and its
-- own, computed over its canonical content, so an edited row breaks its own hash and a deleted
-- row breaks its successor's link. audit_head remembers the newest row, so deleting the tail is
-- caught too. Appends take a transaction-scoped advisory lock, so ids and links follow one order.

ALTER TABLE audit_log ADD COLUMN reason    text;
ALTER TABLE audit_log ADD COLUMN before    jsonb;
ALTER TABLE audit_log ADD COLUMN after     jsonb;
ALTER TABLE audit_log ADD COLUMN prev_hash text NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN hash      text NOT NULL DEFAULT '';
CREATE INDEX audit_log_action_idx ON audit_log (action, id DESC);

CREATE TABLE audit_head (
  id        smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  last_id   bigint   NOT NULL DEFAULT 0,
  last_hash text     NOT NULL DEFAULT '',
  rows      bigint   NOT NULL DEFAULT 0
);
INSERT INTO audit_head (id) VALUES (1);
