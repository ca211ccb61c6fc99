ALTER TABLE "venues" ADD COLUMN "table_optimisation" text DEFAULT 'on' NOT NULL;--> statement-breakpoint
ALTER TABLE "reservations" ADD COLUMN "table_locked" boolean DEFAULT false NOT NULL;