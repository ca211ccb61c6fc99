-- A counter per venue, bumped by every write to its reservations or their table occupancy, in the
-- writing transaction. Writers of a venue queue on its row until commit, so a reader that sees
-- version N has seen every committed change up to N: availability keeps a venue day's
-- reservations in process memory and reloads them only when the version moved. Triggers, so
-- that no writer (API, imports, timers) can forget it.
CREATE TABLE "reservation_versions" (
  "venue_id" uuid PRIMARY KEY NOT NULL REFERENCES "venues"("id"),
  "version" bigint NOT NULL
);
--> statement-breakpoint
CREATE FUNCTION bump_reservation_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO reservation_versions AS rv (venue_id, version)
  VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.venue_id ELSE NEW.venue_id END, 1)
  ON CONFLICT (venue_id) DO UPDATE SET version = rv.version + 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "reservations_bump_version" AFTER INSERT OR UPDATE OR DELETE ON "reservations"
  FOR EACH ROW EXECUTE FUNCTION bump_reservation_version();
--> statement-breakpoint
CREATE TRIGGER "reservation_tables_bump_version" AFTER INSERT OR UPDATE OR DELETE ON "reservation_tables"
  FOR EACH ROW EXECUTE FUNCTION bump_reservation_version();
