-- Published events written before positions existed get them in their createdAt order, so that a
-- stream client can resume after any event id (docs/webhooks.md "Live event stream"); the sequence continues after them.
WITH ordered AS (
  SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM events WHERE published
)
UPDATE events SET position = ordered.n FROM ordered WHERE events.id = ordered.id;
--> statement-breakpoint
SELECT setval('events_position_seq', coalesce((SELECT max(position) FROM events), 0) + 1, false);
