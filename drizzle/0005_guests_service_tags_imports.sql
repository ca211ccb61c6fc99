CREATE TABLE "guests" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"venue_id" uuid NOT NULL,
	"phone" text NOT NULL,
	"phone_national" text NOT NULL,
	"first_name" text,
	"last_name" text,
	"email" text,
	"allergies" text,
	"allergens" text[] DEFAULT '{}' NOT NULL,
	"notes" text,
	"visit_count" integer DEFAULT 0 NOT NULL,
	"no_show_count" integer DEFAULT 0 NOT NULL,
	"cancelled_count" integer DEFAULT 0 NOT NULL,
	"last_visit_at" timestamp (3) with time zone,
	"consents" jsonb DEFAULT '{"marketingEmail":false,"marketingSms":false}'::jsonb NOT NULL,
	"campaign_tags" text[] DEFAULT '{}' NOT NULL,
	"service_tags" text[] DEFAULT '{}' NOT NULL,
	"external_ref" text,
	"search_text" text GENERATED ALWAYS AS (guest_search_text(first_name, last_name, email, phone, phone_national)) STORED NOT NULL,
	"deleted_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "service_tags" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"venue_id" uuid NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "imports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"organisation_id" uuid NOT NULL,
	"api_key_id" uuid NOT NULL,
	"venue_ids" uuid[],
	"kind" text NOT NULL,
	"status" text DEFAULT 'processing' NOT NULL,
	"idempotency_key" text,
	"request_hash" text NOT NULL,
	"rows" jsonb NOT NULL,
	"total_rows" integer NOT NULL,
	"processed_rows" integer DEFAULT 0 NOT NULL,
	"created_rows" integer DEFAULT 0 NOT NULL,
	"updated_rows" integer DEFAULT 0 NOT NULL,
	"rejected_rows" integer DEFAULT 0 NOT NULL,
	"rejections" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL,
	"completed_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT clock_timestamp() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "guests" ADD CONSTRAINT "guests_organisation_id_organisations_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "guests" ADD CONSTRAINT "guests_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "service_tags" ADD CONSTRAINT "service_tags_venue_id_venues_id_fk" FOREIGN KEY ("venue_id") REFERENCES "public"."venues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "imports" ADD CONSTRAINT "imports_organisation_id_organisations_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "public"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "imports" ADD CONSTRAINT "imports_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "guests_venue_phone_live_idx" ON "guests" USING btree ("venue_id","phone") WHERE "guests"."deleted_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "guests_venue_external_ref_live_idx" ON "guests" USING btree ("venue_id","external_ref") WHERE "guests"."deleted_at" is null and "guests"."external_ref" is not null;--> statement-breakpoint
CREATE INDEX "guests_venue_created_idx" ON "guests" USING btree ("venue_id","created_at","id");--> statement-breakpoint
CREATE INDEX "guests_org_created_idx" ON "guests" USING btree ("organisation_id","created_at","id");--> statement-breakpoint
CREATE INDEX "guests_venue_updated_idx" ON "guests" USING btree ("venue_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "guests_org_updated_idx" ON "guests" USING btree ("organisation_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "guests_org_email_idx" ON "guests" USING btree ("organisation_id",lower("email"));--> statement-breakpoint
CREATE INDEX "guests_org_external_ref_idx" ON "guests" USING btree ("organisation_id","external_ref");--> statement-breakpoint
CREATE INDEX "guests_trash_idx" ON "guests" USING btree ("deleted_at") WHERE "guests"."deleted_at" is not null;--> statement-breakpoint
CREATE INDEX "guests_search_idx" ON "guests" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE UNIQUE INDEX "service_tags_venue_name_idx" ON "service_tags" USING btree ("venue_id",lower("name"));--> statement-breakpoint
CREATE INDEX "service_tags_venue_created_idx" ON "service_tags" USING btree ("venue_id","created_at","id");--> statement-breakpoint
CREATE INDEX "service_tags_venue_updated_idx" ON "service_tags" USING btree ("venue_id","updated_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "imports_key_idempotency_idx" ON "imports" USING btree ("api_key_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "imports_org_created_idx" ON "imports" USING btree ("organisation_id","created_at","id");--> statement-breakpoint
CREATE INDEX "imports_org_updated_idx" ON "imports" USING btree ("organisation_id","updated_at","id");