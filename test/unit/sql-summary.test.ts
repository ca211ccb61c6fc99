import { describe, expect, it } from 'vitest';
import { summariseStatement } from '../../src/lib/sql-summary.js';

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
