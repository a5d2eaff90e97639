-- The three session tables that grow with traffic become partitioned by day (docs/storage.md#retention),
-- so retention drops whole partitions instead of deleting rows (a DELETE leaves dead tuples to
-- vacuum and bloats the table; a dropped partition gives its files back at once).
--
-- The partition key must be in every unique constraint, and an upsert never moves a row to another
-- partition, so each row's key is a day fixed when the row is written:
--   stash_archive.expires_day       the UTC day its expires_at falls in (dropped once that day has passed)
--   session_checkpoint.day          the UTC day the row was written (dropped retention after that day)
--   session_turn.day                likewise
-- A key rewritten on a later day gets a second row in that day's partition; readers take the
-- newest (libs/storage/src/sql/session-lookups.ts). Rows whose day has no partition yet land in
-- the DEFAULT partition, which the maintenance (libs/storage/src/sql/partitions.ts) empties into
-- day partitions; existing rows start there and move on its first round.
--
-- Each old table is renamed, its columns copied (LIKE: types, NOT NULL, defaults) into the new one
-- with the day added, its rows copied and the old table dropped, in this migration's transaction:
-- the copy holds their locks for as long as it takes (seconds per million rows).

DO $$
DECLARE
  t record;
BEGIN
  FOR t IN SELECT * FROM (VALUES
      ('stash_archive', 'expires_day', 'expires_at', 'tenant, id', 'stash_archive_expires_idx'),
      ('session_checkpoint', 'day', 'updated_at', 'tenant, session, slot', 'session_checkpoint_updated_idx'),
      ('session_turn', 'day', 'updated_at', 'tenant, session', 'session_turn_updated_idx')
    ) AS v(name, day, stamp, key, stamp_idx)
  LOOP
    EXECUTE format('ALTER TABLE %I RENAME TO %I', t.name, t.name || '_unpartitioned');
    EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', t.name || '_unpartitioned', t.name || '_pkey', t.name || '_unpartitioned_pkey');
    -- The purge's index on the timestamp: partitions are dropped whole, nothing scans by it now.
    EXECUTE format('DROP INDEX %I', t.stamp_idx);
    EXECUTE format(
      'CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS, %I date NOT NULL, CONSTRAINT %I PRIMARY KEY (%s, %I)) PARTITION BY RANGE (%I)',
      t.name, t.name || '_unpartitioned', t.day, t.name || '_pkey', t.key, t.day, t.day);
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', t.name || '_default', t.name);
    EXECUTE format('INSERT INTO %I SELECT *, (%I AT TIME ZONE ''UTC'')::date FROM %I', t.name, t.stamp, t.name || '_unpartitioned');
    EXECUTE format('DROP TABLE %I', t.name || '_unpartitioned');
  END LOOP;
END
$$;
