-- The entries still in a queue, by venue. Keyed by serviceDate alone, whether anybody waits at a venue
-- (read with every batch of events by worker-events) read every venue's waiting entries: with 15
-- waiting at each of 200 venues, a lone event's read went through all 2,985 of them (1.3 ms of
-- PostgreSQL per event, in a hashed subplan of its generic plan); keyed by venue, the few of its own
-- (6 buffers, 0.03 ms). The expiry timer reads the index whole either way: it holds only the queues
-- not yet over.
DROP INDEX "waitlist_entries_active_idx";--> statement-breakpoint
CREATE INDEX "waitlist_entries_active_idx" ON "waitlist_entries" USING btree ("venue_id","service_date") WHERE "waitlist_entries"."status" in ('waiting', 'notified');