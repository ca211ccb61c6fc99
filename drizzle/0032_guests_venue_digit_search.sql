-- docs/guests.md "Search": a venue's search by phone digits through the digit trigrams keyed by the
-- venue. Phone numbers share trigrams (`330`, `300`, `000`) across the organisation, which
-- guests_venue_search_idx checks against each candidate of the organisation, whatever the venue;
-- with the venue in each key, the postings read are the venue's own.
-- The function: the trigrams of each run of 3 or more ASCII digits of the search text, each prefixed
-- with the venue's id. Applied to a search word of digits, it gives the keys that every guest of the
-- venue whose search text contains the word holds.
CREATE OR REPLACE FUNCTION guest_digit_trigrams(venue_id uuid, search_text text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
  AS $$
    SELECT coalesce(array_agg(DISTINCT venue_id::text || substr(r.m[1], i, 3)), '{}')
    FROM regexp_matches(search_text, '[0-9]{3,}', 'g') AS r(m)
    CROSS JOIN generate_series(1, length(r.m[1]) - 2) AS i
  $$;
--> statement-breakpoint
-- IF NOT EXISTS: an operator may build it first, CONCURRENTLY (docs/operations.md). btree_gin
-- (migration 0031) gives GIN the uuid equality.
CREATE INDEX IF NOT EXISTS "guests_venue_digits_idx" ON "guests" USING gin ("venue_id",guest_digit_trigrams("venue_id", "search_text"));
