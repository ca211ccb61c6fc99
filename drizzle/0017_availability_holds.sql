CREATE TABLE "availability_holds" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"venue_id" uuid NOT NULL,
	"api_key_id" uuid NOT NULL,
	"caller_ip" text,
	"service_date" date NOT NULL,
	"time" text NOT NULL,
	"party_size" integer NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone NOT NULL,
	"turn_time_minutes" integer NOT NULL,
	"table_id" uuid,
	"table_combination_id" uuid,
	"seats" integer NOT NULL,
	"overflows_shift" boolean NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "reservation_tables" DROP CONSTRAINT "reservation_tables_reservation_id_table_id_pk";--> statement-breakpoint
ALTER TABLE "reservation_tables" ALTER COLUMN "reservation_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "reservation_tables" ADD COLUMN "hold_id" uuid;--> statement-breakpoint
ALTER TABLE "reservation_tables" ADD COLUMN "expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "availability_holds" ADD CONSTRAINT "availability_holds_organisation_id_organisations_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "availability_holds" ADD CONSTRAINT "availability_holds_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "availability_holds" ADD CONSTRAINT "availability_holds_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "availability_holds_venue_date_idx" ON "availability_holds" USING btree ("venue_id","service_date");--> statement-breakpoint
CREATE INDEX "availability_holds_caller_idx" ON "availability_holds" USING btree ("api_key_id","caller_ip");--> statement-breakpoint
CREATE INDEX "availability_holds_expires_idx" ON "availability_holds" USING btree ("expires_at");--> statement-breakpoint
ALTER TABLE "reservation_tables" ADD CONSTRAINT "reservation_tables_hold_id_availability_holds_id_fk" FOREIGN KEY ("hold_id") REFERENCES "public"."availability_holds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "reservation_tables_reservation_table_idx" ON "reservation_tables" USING btree ("reservation_id","table_id");--> statement-breakpoint
CREATE UNIQUE INDEX "reservation_tables_hold_table_idx" ON "reservation_tables" USING btree ("hold_id","table_id");--> statement-breakpoint
ALTER TABLE "reservation_tables" ADD CONSTRAINT "reservation_tables_one_owner" CHECK (("reservation_tables"."reservation_id" is null) <> ("reservation_tables"."hold_id" is null) and ("reservation_tables"."hold_id" is null) = ("reservation_tables"."expires_at" is null));