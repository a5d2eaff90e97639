-- Shadow evaluation (issue 16): what a candidate config version would have done beside the active
-- one, per tenant and version pair, summed over every replica. Each replica adds its deltas every
-- few seconds; maps (drop reasons, component acted counts) are added key by key. Bounded: the
-- registry bounds the component keys, the drop reasons are a fixed set, and the writer keeps only
-- the most recently updated pairs of each tenant.

CREATE FUNCTION cg_jsonb_add(a jsonb, b jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_object_agg(k, coalesce((a ->> k)::bigint, 0) + coalesce((b ->> k)::bigint, 0)), '{}'::jsonb)
    FROM (SELECT jsonb_object_keys(a) AS k UNION SELECT jsonb_object_keys(b)) AS keys
$$;

CREATE TABLE shadow_tallies (
  tenant                 text        NOT NULL,
  active_version         integer     NOT NULL,
  candidate_version      integer     NOT NULL,
  sampled                bigint      NOT NULL DEFAULT 0,
  evaluated              bigint      NOT NULL DEFAULT 0,
  dropped                jsonb       NOT NULL DEFAULT '{}'::jsonb,
  tokens_before          bigint      NOT NULL DEFAULT 0,
  tokens_after_active    bigint      NOT NULL DEFAULT 0,
  tokens_after_candidate bigint      NOT NULL DEFAULT 0,
  acted_active           jsonb       NOT NULL DEFAULT '{}'::jsonb,
  acted_candidate        jsonb       NOT NULL DEFAULT '{}'::jsonb,
  first_at               timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, active_version, candidate_version)
);
