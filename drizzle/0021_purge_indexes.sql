-- The daily purges read only what is due: concluded deliveries by their conclusion time, idempotency
-- keys by their age. Their scans bound the column against statement_timestamp(), which an index can
-- use (clock_timestamp() is volatile and cannot bound an index scan). On a large existing table, build
-- these first with CREATE INDEX CONCURRENTLY under the same names (IF NOT EXISTS then skips them).
CREATE INDEX IF NOT EXISTS "idempotency_keys_created_idx" ON "idempotency_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "webhook_deliveries_concluded_idx" ON "webhook_deliveries" USING btree ("updated_at") WHERE "webhook_deliveries"."status" in ('delivered', 'discarded');