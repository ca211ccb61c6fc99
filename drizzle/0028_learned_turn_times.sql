CREATE TABLE "learned_turn_times" (
	"venue_id" uuid PRIMARY KEY NOT NULL,
	"stats" jsonb NOT NULL,
	"learned_for_date" date NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "venues" ADD COLUMN "turn_time_source" text DEFAULT 'configured' NOT NULL;--> statement-breakpoint
ALTER TABLE "waitlist_entries" ADD COLUMN "estimated_seat_from" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "waitlist_entries" ADD COLUMN "estimated_seat_to" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "waitlist_entries" ADD COLUMN "estimated_wait_minutes" integer;--> statement-breakpoint
ALTER TABLE "learned_turn_times" ADD CONSTRAINT "learned_turn_times_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;