-- A writing transaction bumps its venue's reservation version once (migrations 0012 and 0013 bumped
-- it once per written row: a booking's reservation and its table made two updates of the row, at
-- commit, while the writers of the venue queue on it). Readers compare versions for equality only,
-- and a transaction's rows commit together, so one bump tells them as much. `bumped_by`: the
-- transaction that bumped it last (xid8, never reused); the transaction's later bumps find it
-- theirs and leave the row as it is (still locked by them until they end).
ALTER TABLE "reservation_versions" ADD COLUMN "bumped_by" xid8;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION bump_reservation_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO reservation_versions AS rv (venue_id, version, bumped_by)
  VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.venue_id ELSE NEW.venue_id END, 1, pg_current_xact_id())
  ON CONFLICT (venue_id) DO UPDATE SET version = rv.version + 1, bumped_by = excluded.bumped_by
    WHERE rv.bumped_by IS DISTINCT FROM excluded.bumped_by;
  RETURN NULL;
END
$$;
