-- Durable half of the session store: what must survive a Redis loss within retention.
-- Forward-only: never edit an applied migration (the runner checks checksums); add a new file.
-- Portable SQL: runs unchanged on PostgreSQL 15 and PGlite (PostgreSQL 18).

-- Originals behind markers, so an expand still resolves after the hot copy is gone.
CREATE TABLE stash_archive (
  tenant      text        NOT NULL,
  id          text        NOT NULL,
  text        text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX stash_archive_expires_idx ON stash_archive (expires_at);

-- Which session stashed which id (GET /expand is scoped by it).
CREATE TABLE ownership (
  tenant      text        NOT NULL,
  session     text        NOT NULL,
  id          text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, session, id)
);
CREATE INDEX ownership_created_idx ON ownership (created_at);

-- Frozen decisions: slot = component:contentKey -> replacement, replayed byte-identically.
CREATE TABLE session_checkpoint (
  tenant       text        NOT NULL,
  session      text        NOT NULL,
  slot         text        NOT NULL,
  replacement  text        NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, session, slot)
);
CREATE INDEX session_checkpoint_updated_idx ON session_checkpoint (updated_at);

-- Sticky per-session flags (offloaded => the expand tool stays advertised; dropping it would
-- change the tools array and flip the provider's cached prefix).
CREATE TABLE session_state (
  tenant      text        NOT NULL,
  session     text        NOT NULL,
  offloaded   boolean     NOT NULL DEFAULT false,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, session)
);

-- Content the model expanded: never reduced again (tenant-wide).
CREATE TABLE kept (
  tenant       text        NOT NULL,
  content_key  text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, content_key)
);
