-- docs/reservations.md: no table ever holds two live reservations over overlapping intervals, enforced by
-- PostgreSQL whatever the number of API processes. btree_gist gives GiST the uuid equality.
CREATE EXTENSION IF NOT EXISTS btree_gist;
--> statement-breakpoint
ALTER TABLE "reservation_tables" ADD CONSTRAINT "reservation_tables_no_overlap"
  EXCLUDE USING gist ("table_id" WITH =, "during" WITH &&) WHERE ("live");
--> statement-breakpoint
-- Availability loads the live occupancy of a venue over a time window.
CREATE INDEX "reservation_tables_venue_during_idx" ON "reservation_tables" USING gist ("venue_id", "during") WHERE "live";
