-- The audit log resists the database's own users (docs/security.md#audit-chain): TRUNCATE skips
-- row triggers, so a statement-level trigger refuses it on the log and its head; the head only
-- moves forward one row at a time (what an append does) and is never deleted. A role that owns
-- the tables, or a superuser, can still disable triggers: the chain is keyed (HMAC, the key is
-- outside the database) and its head is also recorded outside it, which is what catches that.
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION cg_refuse_rewrite();
CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON audit_head
  FOR EACH STATEMENT EXECUTE FUNCTION cg_refuse_rewrite();
CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head
  FOR EACH ROW EXECUTE FUNCTION cg_refuse_rewrite();

CREATE FUNCTION cg_audit_head_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.rows <> OLD.rows + 1 OR NEW.last_id <= OLD.last_id THEN
    RAISE EXCEPTION 'audit_head: only an append moves the head (one row forward)';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER audit_head_forward_only BEFORE UPDATE ON audit_head
  FOR EACH ROW EXECUTE FUNCTION cg_audit_head_forward();
