CREATE TABLE "reservations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"venue_id" uuid NOT NULL,
	"service_date" date NOT NULL,
	"time" text NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"ends_at" timestamp (3) with time zone NOT NULL,
	"party_size" integer NOT NULL,
	"status" text NOT NULL,
	"table_id" uuid,
	"table_combination_id" uuid,
	"table_assigned" boolean DEFAULT false NOT NULL,
	"needs_attention" boolean DEFAULT false NOT NULL,
	"notes" text,
	"source" text NOT NULL,
	"source_detail" text,
	"external_ref" text,
	"guest_id" uuid,
	"arrived_at" timestamp (3) with time zone,
	"seated_at" timestamp (3) with time zone,
	"freed_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone,
	"no_show_at" timestamp (3) with time zone,
	"cancelled_at" timestamp (3) with time zone,
	"late_notified_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reservation_tables" (
	"reservation_id" uuid NOT NULL,
	"table_id" uuid NOT NULL,
	"venue_id" uuid NOT NULL,
	"during" "tstzrange" NOT NULL,
	"live" boolean DEFAULT true NOT NULL,
	CONSTRAINT "reservation_tables_reservation_id_table_id_pk" PRIMARY KEY("reservation_id","table_id")
);
--> statement-breakpoint
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_organisation_id_organisations_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_guest_id_guests_id_fk" FOREIGN KEY ("guest_id") REFERENCES "public"."guests"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservation_tables" ADD CONSTRAINT "reservation_tables_reservation_id_reservations_id_fk" FOREIGN KEY ("reservation_id") REFERENCES "public"."reservations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservation_tables" ADD CONSTRAINT "reservation_tables_table_id_floor_tables_id_fk" FOREIGN KEY ("table_id") REFERENCES "public"."floor_tables"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservation_tables" ADD CONSTRAINT "reservation_tables_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "reservations_venue_date_idx" ON "reservations" USING btree ("venue_id","service_date");--> statement-breakpoint
CREATE INDEX "reservations_venue_starts_idx" ON "reservations" USING btree ("venue_id","starts_at","id");--> statement-breakpoint
CREATE INDEX "reservations_org_starts_idx" ON "reservations" USING btree ("organisation_id","starts_at","id");--> statement-breakpoint
CREATE INDEX "reservations_venue_updated_idx" ON "reservations" USING btree ("venue_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "reservations_org_updated_idx" ON "reservations" USING btree ("organisation_id","updated_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "reservations_venue_external_ref_idx" ON "reservations" USING btree ("venue_id","external_ref") WHERE "reservations"."external_ref" is not null;--> statement-breakpoint
CREATE INDEX "reservations_guest_idx" ON "reservations" USING btree ("guest_id");--> statement-breakpoint
CREATE INDEX "reservations_seated_idx" ON "reservations" USING btree ("venue_id","ends_at") WHERE "reservations"."status" = 'seated';--> statement-breakpoint
CREATE INDEX "reservations_expected_idx" ON "reservations" USING btree ("starts_at") WHERE "reservations"."status" in ('created', 'confirmed');--> statement-breakpoint
CREATE INDEX "reservation_tables_table_idx" ON "reservation_tables" USING btree ("table_id");