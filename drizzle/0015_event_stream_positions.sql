-- The live event stream (docs/webhooks.md "Live event stream") reads events by `position`, assigned at insert from
-- events_position_seq while the organisation's stream lock is held until commit (src/services/events/outbox.ts).
CREATE SEQUENCE "public"."events_position_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "position" bigint;--> statement-breakpoint
CREATE INDEX "events_org_position_idx" ON "events" USING btree ("organisation_id","position") WHERE "events"."position" is not null;