-- The stamp of a venue's configuration (src/services/availability/venue-day-loader.ts): the last
-- transaction that changed any of its configuration rows, noted by triggers, so that no writer (the
-- API, an import, the turn-time timer, an operator's SQL) can forget it. A process keeps each venue's
-- configuration in memory and reads it again only when the stamp moved; the stamp is one row read
-- by primary key, where counting and dating the venue's rows of eight tables at every booking and
-- availability request cost PostgreSQL more than the rest of the venue-day read.
-- A transaction id (xid8: never reused, whatever rolls back), not a counter: a counter given back by
-- a rollback could name two different configurations. A transaction notes its change once: its
-- later changes of the same venue find the row noted by it already and leave it (still locked).
CREATE TABLE "venue_config_changes" (
  "venue_id" uuid PRIMARY KEY NOT NULL REFERENCES "venues"("id"),
  "changed_by" xid8 NOT NULL
);
--> statement-breakpoint
CREATE FUNCTION note_venue_config_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO venue_config_changes AS c (venue_id, changed_by)
  VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.venue_id ELSE NEW.venue_id END, pg_current_xact_id())
  ON CONFLICT (venue_id) DO UPDATE SET changed_by = excluded.changed_by WHERE c.changed_by <> excluded.changed_by;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- The same trigger on each configuration table: <table>_note_config_change.
DO $$
DECLARE
  config_table text;
BEGIN
  FOREACH config_table IN ARRAY ARRAY['shifts', 'closures', 'turn_time_rules', 'pacing_rules', 'floor_plans', 'areas',
    'floor_tables', 'table_combinations', 'learned_turn_times']
  LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION note_venue_config_change()',
      config_table || '_note_config_change', config_table);
  END LOOP;
END
$$;
