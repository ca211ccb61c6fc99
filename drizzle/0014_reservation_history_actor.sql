-- Reservation history (docs/reservations.md "Reservation history"): who made each change is recorded with its events from
-- now on (older rows keep null, shown as an unrecorded system actor); `published = false` marks the
-- history-only rows imports write (imports emit no events); the index serves one reservation's history.
ALTER TABLE "events" ADD COLUMN "actor" jsonb;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "published" boolean DEFAULT true NOT NULL;--> statement-breakpoint
CREATE INDEX "events_subject_created_idx" ON "events" USING btree ("subject_id","created_at","id");