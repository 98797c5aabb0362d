-- The wallet ledger is append-only: an entry, once written, is never changed or removed.
CREATE FUNCTION wallet_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'wallet_ledger is append-only: % is not allowed', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER wallet_ledger_append_only BEFORE UPDATE OR DELETE ON "wallet_ledger"
  FOR EACH ROW EXECUTE FUNCTION wallet_ledger_append_only();
--> statement-breakpoint
CREATE TRIGGER wallet_ledger_no_truncate BEFORE TRUNCATE ON "wallet_ledger"
  FOR EACH STATEMENT EXECUTE FUNCTION wallet_ledger_append_only();
