-- Measured savings (issue 16): the provider-billed cost of each session, per tenant and config
-- version, with its arm (treated | holdout) and the input tokens the client sent, summed over
-- every replica (each adds its deltas in one statement per flush). The treated-vs-holdout estimate
-- and its interval are computed over these rows. Bounded by the writer: the newest sessions of
-- each version and the newest versions of each tenant are kept. `session` is a hash of the key.
CREATE TABLE holdout_sessions (
  tenant        text             NOT NULL,
  version       integer          NOT NULL,
  session       text             NOT NULL,
  arm           text             NOT NULL CHECK (arm IN ('treated', 'holdout')),
  billed_usd    double precision NOT NULL DEFAULT 0,
  input_tokens  bigint           NOT NULL DEFAULT 0,
  turns         integer          NOT NULL DEFAULT 0,
  first_at      timestamptz      NOT NULL DEFAULT now(),
  updated_at    timestamptz      NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, version, session)
);
CREATE INDEX holdout_sessions_recent_idx ON holdout_sessions (tenant, version, updated_at);
