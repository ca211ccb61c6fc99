-- Stream positions move out of the events row (src/services/events/event-sequencer.ts): numbering an
-- event rewrote its wide row and every index of events (an UPDATE that cannot be HOT, and a dead
-- row left for vacuum). Now a run inserts narrow rows into event_positions and deletes what it numbered
-- from unsequenced_events, which a trigger fills with each published event.
CREATE TABLE "event_positions" (
	"organisation_id" uuid NOT NULL,
	"position" bigint NOT NULL,
	"event_id" uuid NOT NULL,
	CONSTRAINT "event_positions_organisation_id_position_pk" PRIMARY KEY("organisation_id","position")
);
--> statement-breakpoint
CREATE TABLE "unsequenced_events" (
	"organisation_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"event_id" uuid NOT NULL,
	CONSTRAINT "unsequenced_events_organisation_id_created_at_event_id_pk" PRIMARY KEY("organisation_id","created_at","event_id")
);
--> statement-breakpoint
-- An existing database keeps its positions and what was still to number (one pass over events; on
-- a large history this takes about 5 s per two million events: docs/operations.md).
INSERT INTO "event_positions" ("organisation_id", "position", "event_id")
  SELECT "organisation_id", "position", "id" FROM "events" WHERE "position" IS NOT NULL;
--> statement-breakpoint
INSERT INTO "unsequenced_events" ("organisation_id", "created_at", "event_id")
  SELECT "organisation_id", "created_at", "id" FROM "events" WHERE "published" AND "position" IS NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX "event_positions_event_idx" ON "event_positions" USING btree ("event_id");--> statement-breakpoint
-- One statement-level trigger: a bulk change's thousands of events are queued by one INSERT.
CREATE FUNCTION queue_unsequenced_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO unsequenced_events (organisation_id, created_at, event_id)
    SELECT organisation_id, created_at, id FROM new_events WHERE published;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "events_queue_unsequenced" AFTER INSERT ON "events"
  REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION queue_unsequenced_events();
--> statement-breakpoint
DROP INDEX "events_org_position_idx";--> statement-breakpoint
DROP INDEX "events_unsequenced_idx";--> statement-breakpoint
ALTER TABLE "events" DROP COLUMN "position";
