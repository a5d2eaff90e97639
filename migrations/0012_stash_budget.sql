-- A tenant's archived originals bounded in bytes (docs/security.md, abuse bounds). Summing the
-- archive per write is too slow (27 ms at 20k rows), so the bytes of rows actually inserted are
-- counted per tenant and UTC day, in the transaction that inserts them: a tenant's usage is the
-- sum of its buckets within retention (at most ~31 rows). The retention purge drops buckets older
-- than retention, an erasure the tenant's buckets (or a session's bytes).
CREATE TABLE stash_bytes (
  tenant  text   NOT NULL,
  day     date   NOT NULL,
  bytes   bigint NOT NULL,
  PRIMARY KEY (tenant, day)
);
CREATE INDEX stash_bytes_day_idx ON stash_bytes (day);

-- What the archive holds at upgrade, counted once under the day each row was archived.
INSERT INTO stash_bytes (tenant, day, bytes)
SELECT tenant, (created_at AT TIME ZONE 'UTC')::date, sum(octet_length(text))::bigint
FROM stash_archive
GROUP BY 1, 2;
