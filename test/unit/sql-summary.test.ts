import { describe, expect, it } from 'vitest';
import { compactStatement, summariseStatement } from '../../src/lib/sql-summary.js';

describe('summariseStatement: the operation and table of a statement span', () => {
  it.each([
    ['select "id", "name" from "venues" where "venues"."id" = $1', 'select', 'venues'],
    ['  SELECT * FROM public.events WHERE id = $1 FOR UPDATE SKIP LOCKED', 'select', 'events'],
    ['insert into "reservations" ("id", "venue_id") values ($1, $2) on conflict do update set "x" = $3', 'insert', 'reservations'],
    ['update "webhook_deliveries" set "status" = $1 where "id" = $2', 'update', 'webhook_deliveries'],
    ['delete from "holds" where "expires_at" < now()', 'delete', 'holds'],
    ['with q as (insert into "events" ("id") values ($1) returning "id") select q."id" from q', 'insert', 'events'],
    ['with recent as (select * from "reservations") select count(*) from recent', 'select', 'reservations'],
    ['select pg_backend_pid() as pid, now()::text as started', 'select', null],
    [
      'select "d"."id", (select count(*) from "reservation_tables" rt where rt.x = $1) from "webhook_deliveries" "d"',
      'select',
      'webhook_deliveries',
    ],
    ['begin', 'begin', null],
    ['(select 1 from "tables")', 'select', 'tables'],
    ['', 'statement', null],
  ])('%s', (text, operation, table) => {
    expect(summariseStatement(text)).toEqual({ operation, table });
  });
});

describe('compactStatement: the text of a statement span, the same statement for PostgreSQL', () => {
  it.each([
    ['select "venues"."id", "name" from "venues" where "venues"."id" = $1', 'select venues.id, name from venues where venues.id = $1'],
    // Keywords, capitals and other characters keep their quotes; so does a name run into another word.
    [
      'select "reservations"."time", "user", "disableDue", "a b", "x$" from "t"',
      'select reservations."time", "user", "disableDue", "a b", "x$" from t',
    ],
    ['select x"id" from t', 'select x"id" from t'],
    // Literals are kept byte for byte, white space and quotes in them included.
    ['select \'a  "b"  c\', \'it\'\'s "x"\' from "t"', "select 'a  \"b\"  c', 'it''s \"x\"' from t"],
    ['select E\'\\\'  "x"\' from "t"', "select E'\\'  \"x\"' from t"],
    // White space outside literals: one space, none at the ends.
    ['\n  select\n    "id"\n  from\t"t"  \n', 'select id from t'],
    // Placeholders stay; a comment, a dollar-quoted string or a quote inside a name leave the text unchanged.
    ['select "id" from "t" where "n" = $12', 'select id from t where n = $12'],
    ['select "id" -- why\nfrom "t"', 'select "id" -- why\nfrom "t"'],
    ['select "id" /* why */ from "t"', 'select "id" /* why */ from "t"'],
    ['select $tag$ "x" $tag$', 'select $tag$ "x" $tag$'],
    ['select "a""b" from "t"', 'select "a""b" from "t"'],
    ['', ''],
  ])('%s', (text, compact) => {
    expect(compactStatement(text)).toBe(compact);
  });
});
