-- The live stream's positions are given after commit by the event sequencer
-- (src/services/events/event-sequencer.ts), one run at a time per organisation, from the
-- organisation's head below; writers no longer take a per-organisation lock through their commit.
CREATE TABLE "event_stream_heads" (
	"organisation_id" uuid PRIMARY KEY NOT NULL,
	"position" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "events_unsequenced_idx" ON "events" USING btree ("organisation_id","created_at","id") WHERE "events"."published" and "events"."position" is null;--> statement-breakpoint
-- Each organisation continues after the highest position its events already have.
INSERT INTO "event_stream_heads" ("organisation_id", "position")
  SELECT "organisation_id", max("position") FROM "events" WHERE "position" IS NOT NULL GROUP BY "organisation_id";
--> statement-breakpoint
-- Positions were taken from this sequence at insert, under the organisation's stream lock; processes
-- of the previous version must be stopped before this migration runs (npm start migrates first).
DROP SEQUENCE "public"."events_position_seq";