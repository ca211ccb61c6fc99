CREATE TABLE "waitlist_entries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"venue_id" uuid NOT NULL,
	"service_date" date NOT NULL,
	"party_size" integer NOT NULL,
	"guest_id" uuid,
	"name" text,
	"phone" text,
	"notes" text,
	"status" text DEFAULT 'waiting' NOT NULL,
	"position" integer NOT NULL,
	"quoted_wait_minutes" integer,
	"notified_at" timestamp (3) with time zone,
	"reservation_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "waitlist_entries" ADD CONSTRAINT "waitlist_entries_organisation_id_organisations_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "waitlist_entries" ADD CONSTRAINT "waitlist_entries_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "waitlist_entries" ADD CONSTRAINT "waitlist_entries_guest_id_guests_id_fk" FOREIGN KEY ("guest_id") REFERENCES "public"."guests"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "waitlist_entries" ADD CONSTRAINT "waitlist_entries_reservation_id_reservations_id_fk" FOREIGN KEY ("reservation_id") REFERENCES "public"."reservations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "waitlist_entries_venue_day_position_idx" ON "waitlist_entries" USING btree ("venue_id","service_date","position");--> statement-breakpoint
CREATE INDEX "waitlist_entries_org_created_idx" ON "waitlist_entries" USING btree ("organisation_id","created_at","id");--> statement-breakpoint
CREATE INDEX "waitlist_entries_org_updated_idx" ON "waitlist_entries" USING btree ("organisation_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "waitlist_entries_active_idx" ON "waitlist_entries" USING btree ("service_date") WHERE "waitlist_entries"."status" in ('waiting', 'notified');