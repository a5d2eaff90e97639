-- Versions are immutable and the audit log is append-only, in the database itself: a stored
-- version's content cannot be rewritten (activation only flips `active`), and an audit row can be
-- neither updated nor deleted. Someone with DDL rights can still drop these triggers; the audit
-- hash chain (0005) is what detects that kind of tampering.

CREATE FUNCTION cg_refuse_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%: % is not allowed (history is immutable)', TG_TABLE_NAME, TG_OP;
END
$$;

CREATE TRIGGER pipeline_configs_immutable BEFORE UPDATE OF tenant, version, document, created_by, created_at ON pipeline_configs
  FOR EACH ROW EXECUTE FUNCTION cg_refuse_rewrite();
CREATE TRIGGER filter_sets_immutable BEFORE UPDATE OF tenant, name, version, yaml, created_by, created_at ON filter_sets
  FOR EACH ROW EXECUTE FUNCTION cg_refuse_rewrite();
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION cg_refuse_rewrite();
