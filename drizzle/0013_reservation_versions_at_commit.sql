-- The version bump of migration 0012 moves to commit time (deferred constraint triggers): a
-- writer then holds its venue's version row only while it commits, instead of from its first
-- write to its commit, so that the writers of one venue overlap everywhere but there. A version
-- is still bumped once per written row, in the writing transaction, in commit order.
DROP TRIGGER "reservations_bump_version" ON "reservations";
--> statement-breakpoint
DROP TRIGGER "reservation_tables_bump_version" ON "reservation_tables";
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "reservations_bump_version" AFTER INSERT OR UPDATE OR DELETE ON "reservations"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_reservation_version();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "reservation_tables_bump_version" AFTER INSERT OR UPDATE OR DELETE ON "reservation_tables"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_reservation_version();
