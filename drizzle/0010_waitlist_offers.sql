CREATE TABLE "waitlist_offers" (
	"freed_by_event_id" uuid PRIMARY KEY NOT NULL,
	"waitlist_entry_id" uuid NOT NULL,
	"table_ids" uuid[] NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "waitlist_offers" ADD CONSTRAINT "waitlist_offers_freed_by_event_id_events_id_fk" FOREIGN KEY ("freed_by_event_id") REFERENCES "public"."events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "waitlist_offers" ADD CONSTRAINT "waitlist_offers_waitlist_entry_id_waitlist_entries_id_fk" FOREIGN KEY ("waitlist_entry_id") REFERENCES "public"."waitlist_entries"("id") ON DELETE cascade ON UPDATE no action;