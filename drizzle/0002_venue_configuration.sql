CREATE TABLE "shifts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"name" text NOT NULL,
	"days_of_week" integer[] NOT NULL,
	"start_time" text NOT NULL,
	"last_seating_time" text NOT NULL,
	"end_time" text NOT NULL,
	"valid_from" date,
	"valid_to" date,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "closures" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"from" date NOT NULL,
	"to" date NOT NULL,
	"shift_ids" uuid[] DEFAULT '{}' NOT NULL,
	"reason" text,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "turn_time_rules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"shift_id" uuid,
	"min_party_size" integer NOT NULL,
	"max_party_size" integer NOT NULL,
	"duration_minutes" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pacing_rules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"shift_id" uuid NOT NULL,
	"is_enabled" boolean DEFAULT true NOT NULL,
	"max_covers" integer NOT NULL,
	"window_minutes" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "floor_plans" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"name" text NOT NULL,
	"is_active" boolean DEFAULT false NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "areas" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"floor_plan_id" uuid NOT NULL,
	"name" text NOT NULL,
	"icon" text DEFAULT 'room' NOT NULL,
	"position" integer DEFAULT 0 NOT NULL,
	"width_cm" integer NOT NULL,
	"height_cm" integer NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "floor_tables" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"floor_plan_id" uuid NOT NULL,
	"area_id" uuid NOT NULL,
	"name" text NOT NULL,
	"shape" text DEFAULT 'square' NOT NULL,
	"min_seats" integer NOT NULL,
	"max_seats" integer NOT NULL,
	"position_x_cm" integer DEFAULT 0 NOT NULL,
	"position_y_cm" integer DEFAULT 0 NOT NULL,
	"width_cm" integer DEFAULT 80 NOT NULL,
	"height_cm" integer DEFAULT 80 NOT NULL,
	"rotation_degrees" integer DEFAULT 0 NOT NULL,
	"is_blocked" boolean DEFAULT false NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "table_combinations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"floor_plan_id" uuid NOT NULL,
	"table_ids" uuid[] NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "shifts" ADD CONSTRAINT "shifts_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "closures" ADD CONSTRAINT "closures_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "turn_time_rules" ADD CONSTRAINT "turn_time_rules_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "turn_time_rules" ADD CONSTRAINT "turn_time_rules_shift_id_shifts_id_fk" FOREIGN KEY ("shift_id") REFERENCES "public"."shifts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pacing_rules" ADD CONSTRAINT "pacing_rules_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pacing_rules" ADD CONSTRAINT "pacing_rules_shift_id_shifts_id_fk" FOREIGN KEY ("shift_id") REFERENCES "public"."shifts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "floor_plans" ADD CONSTRAINT "floor_plans_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "areas" ADD CONSTRAINT "areas_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "areas" ADD CONSTRAINT "areas_floor_plan_id_floor_plans_id_fk" FOREIGN KEY ("floor_plan_id") REFERENCES "public"."floor_plans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "floor_tables" ADD CONSTRAINT "floor_tables_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "floor_tables" ADD CONSTRAINT "floor_tables_floor_plan_id_floor_plans_id_fk" FOREIGN KEY ("floor_plan_id") REFERENCES "public"."floor_plans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "floor_tables" ADD CONSTRAINT "floor_tables_area_id_areas_id_fk" FOREIGN KEY ("area_id") REFERENCES "public"."areas"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "table_combinations" ADD CONSTRAINT "table_combinations_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "table_combinations" ADD CONSTRAINT "table_combinations_floor_plan_id_floor_plans_id_fk" FOREIGN KEY ("floor_plan_id") REFERENCES "public"."floor_plans"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "shifts_venue_idx" ON "shifts" USING btree ("venue_id","created_at","id");--> statement-breakpoint
CREATE INDEX "shifts_venue_updated_idx" ON "shifts" USING btree ("venue_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "closures_venue_idx" ON "closures" USING btree ("venue_id","from","id");--> statement-breakpoint
CREATE INDEX "closures_venue_updated_idx" ON "closures" USING btree ("venue_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "turn_time_rules_venue_idx" ON "turn_time_rules" USING btree ("venue_id","created_at","id");--> statement-breakpoint
CREATE INDEX "turn_time_rules_venue_updated_idx" ON "turn_time_rules" USING btree ("venue_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "pacing_rules_venue_idx" ON "pacing_rules" USING btree ("venue_id","created_at","id");--> statement-breakpoint
CREATE INDEX "pacing_rules_venue_updated_idx" ON "pacing_rules" USING btree ("venue_id","updated_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "floor_plans_one_active_idx" ON "floor_plans" USING btree ("venue_id") WHERE "floor_plans"."is_active";--> statement-breakpoint
CREATE INDEX "floor_plans_venue_idx" ON "floor_plans" USING btree ("venue_id","created_at","id");--> statement-breakpoint
CREATE INDEX "areas_plan_idx" ON "areas" USING btree ("floor_plan_id","position","id");--> statement-breakpoint
CREATE INDEX "floor_tables_plan_idx" ON "floor_tables" USING btree ("floor_plan_id","area_id","name");--> statement-breakpoint
CREATE INDEX "floor_tables_venue_idx" ON "floor_tables" USING btree ("venue_id");--> statement-breakpoint
CREATE INDEX "table_combinations_plan_idx" ON "table_combinations" USING btree ("floor_plan_id");