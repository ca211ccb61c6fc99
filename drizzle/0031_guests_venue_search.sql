-- docs/guests.md "Search": the venue joins the trigrams in one GIN index, so that a venue's search
-- reads that venue's matches rather than the organisation's. btree_gin gives GIN the uuid equality.
-- IF NOT EXISTS: an operator may build it first, CONCURRENTLY (docs/operations.md).
CREATE EXTENSION IF NOT EXISTS btree_gin;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "guests_venue_search_idx" ON "guests" USING gin ("venue_id","search_text" gin_trgm_ops);--> statement-breakpoint
DROP INDEX IF EXISTS "guests_search_idx";
