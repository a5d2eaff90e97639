-- The previous turn of each conversation (message count, time, longest cache TTL asked, and the
-- messages that turn's forwarded body rewrote). Without it a Redis loss would read the next turn
-- as a session's first: everything "uncached", and new decisions at depth would bust the
-- provider's cache. Written behind the hot copy; read only when the hot copy is gone.
CREATE TABLE session_turn (
  tenant      text        NOT NULL,
  session     text        NOT NULL,
  n           integer     NOT NULL,
  at_ms       bigint      NOT NULL,
  ttl_ms      bigint      NOT NULL,
  rewritten   text,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, session)
);
CREATE INDEX session_turn_updated_idx ON session_turn (updated_at);
