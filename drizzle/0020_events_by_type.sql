-- GET /events?type=… (with or without venueId): a rare type is found by index, not by scanning the
-- organisation's history. On a large existing table this CREATE INDEX blocks writes to events while it
-- builds (minutes at millions of rows): on such a database create them first by hand with
-- CREATE INDEX CONCURRENTLY under the same names, and this migration then finds them (IF NOT EXISTS).
CREATE INDEX IF NOT EXISTS "events_org_type_created_idx" ON "events" USING btree ("organisation_id","type","created_at","id");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "events_venue_type_created_idx" ON "events" USING btree ("venue_id","type","created_at","id");