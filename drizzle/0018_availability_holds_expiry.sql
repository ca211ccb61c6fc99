-- docs/reservations.md "Slot holds": an expired hold occupies nothing, even before any sweep. An exclusion constraint
-- cannot look at the clock, so a hold's occupancy rows carry its expires_at, and before any live
-- occupancy row is written (a booking, a hold, a table taken back) this trigger deletes the lapsed
-- hold rows of that table that overlap it, in the writing transaction: the exclusion constraint
-- then sees only live holds. Deleting takes the rows' locks, so two writers racing for a lapsed
-- hold's table queue on it, and the constraint decides between them as between two bookings.
-- A trigger, so that no writer (API, imports, tests) can forget it. The engine ignores lapsed
-- holds on its side (src/lib/availability/occupancy.ts).
CREATE FUNCTION clear_lapsed_holds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM reservation_tables
    WHERE hold_id IS NOT NULL
      AND table_id = NEW.table_id
      AND during && NEW.during
      AND expires_at <= clock_timestamp()
      AND hold_id IS DISTINCT FROM NEW.hold_id;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "reservation_tables_clear_lapsed_holds" BEFORE INSERT OR UPDATE OF "table_id", "during", "live" ON "reservation_tables"
  FOR EACH ROW WHEN (NEW.live) EXECUTE FUNCTION clear_lapsed_holds();
--> statement-breakpoint
-- The trigger's lookup: only holds' rows, by table and time.
CREATE INDEX "reservation_tables_hold_during_idx" ON "reservation_tables" USING gist ("table_id", "during") WHERE "hold_id" IS NOT NULL;
--> statement-breakpoint
-- Holds count toward pacing: the availability cache of a venue day reloads when they change (migration 0012).
CREATE CONSTRAINT TRIGGER "availability_holds_bump_version" AFTER INSERT OR UPDATE OR DELETE ON "availability_holds"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_reservation_version();
