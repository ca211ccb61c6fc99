import { and, asc, between, eq, sql, type SQLWrapper } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthContext } from '../../src/core/auth-context.js';
import { createDatabase, db, type Database } from '../../src/db/client.js';
import {
  eventPositions,
  events,
  idempotencyKeys,
  reservations,
  webhookDeliveries,
  webhookDeliveryAttempts,
} from '../../src/db/schema/index.js';
import { selectEventsAfter } from '../../src/services/events/event-stream.js';
import { expiredIdempotencyKeys } from '../../src/services/idempotency/idempotency-store.js';
import { reservationListFilters, type ReservationListQuery } from '../../src/services/reservations/list-reservations.js';
import { deliveryListFilters } from '../../src/services/webhooks/delivery-service.js';
import { selectDueLate, selectDueNoShows } from '../../src/services/timers/late-reservations.js';
import { concludedLongAgo } from '../../src/services/timers/purge-deliveries.js';
import { someoneWaitsAt } from '../../src/services/waitlist/wait-quotes.js';
import { createOwnDatabase, type OwnDatabase } from '../support/own-database.js';

/** The tables that grow with history: no request or timer statement may read them whole. */
const largeTables = new Set([
  'reservations',
  'events',
  'event_positions',
  'webhook_deliveries',
  'webhook_delivery_attempts',
  'idempotency_keys',
  'guests',
  'reservation_tables',
]);
const someId = '00000000-0000-4000-8000-000000000000';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** Sequential scans of large tables, and index scans without a condition (an index read whole), by name. */
function wholeReadsOf(node: PlanNode, table?: string): string[] {
  const relation = node['Relation Name'] ?? table;
  const type = node['Node Type'];
  const own =
    type === 'Seq Scan' && relation && largeTables.has(relation)
      ? [relation]
      : /Index/.test(type) && node['Index Name'] && !node['Index Cond'] && (!relation || largeTables.has(relation))
        ? [`${node['Index Name']} (whole index)`]
        : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => wholeReadsOf(child, type === 'Bitmap Heap Scan' ? relation : undefined))];
}

/**
 * What of the large tables a statement would read whole: a sequential scan, or an index read without
 * a bound (a condition the index cannot use, e.g. against the volatile clock_timestamp()). With
 * sequential scans disabled the planner still chooses one when no index serves the statement's
 * conditions (on a small test database it would prefer a sequential scan anyway).
 */
async function largeTablesScannedWhole(query: SQLWrapper): Promise<string[]> {
  return wholeReadsOf(await planOf(query));
}

/**
 * Plans are made on a migrated database of this file's own whose tables no other file fills: the
 * planner's choice then rests on the schema and its indexes alone, not on the statistics the rest of
 * the suite happens to have left in the run's database at that moment (a plan once flipped under a
 * second suite running beside). The statements are built with the run's `db` and only explained here.
 */
let own: OwnDatabase;
let planner: Database;
beforeAll(async () => {
  own = await createOwnDatabase('plans');
  planner = createDatabase({ url: own.url, pooler: 'none', poolSize: 1, statementTimeoutMs: 0 });
}, 60_000);
afterAll(async () => {
  await planner.sql.end();
  await own.drop();
});

async function planOf(query: SQLWrapper): Promise<PlanNode> {
  return planner.db.transaction(async (tx) => {
    await tx.execute(sql`set local enable_seqscan = off`);
    const rows = (await tx.execute(sql`explain (format json) ${query}`)) as unknown as { 'QUERY PLAN': [{ Plan: PlanNode }] }[];
    return rows[0]['QUERY PLAN'][0].Plan;
  });
}

describe('statements of the request and timer paths read large tables by index', () => {
  it.each([
    ['late scan', () => selectDueLate(db())],
    ['no-show scan', () => selectDueNoShows(db())],
    [
      'concluded deliveries purge',
      () => db().select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(concludedLongAgo).limit(1000),
    ],
    ['idempotency keys purge', () => db().select({ key: idempotencyKeys.key }).from(idempotencyKeys).where(expiredIdempotencyKeys)],
    [
      'GET /events?type= of an organisation',
      () =>
        db()
          .select()
          .from(events)
          .where(and(eq(events.organisationId, someId), eq(events.published, true), eq(events.type, 'webhook_test')))
          .orderBy(asc(events.createdAt), asc(events.id))
          .limit(50),
    ],
    ['GET /events/stream: the events after a position', () => selectEventsAfter(someId, 1000)],
    [
      'GET /events/stream?after=: the position of an event',
      () => db().select({ position: eventPositions.position }).from(eventPositions).where(eq(eventPositions.eventId, someId)),
    ],
    [
      'GET /webhook-deliveries/{id}/attempts',
      () =>
        db()
          .select()
          .from(webhookDeliveryAttempts)
          .where(eq(webhookDeliveryAttempts.deliveryId, someId))
          .orderBy(asc(webhookDeliveryAttempts.attempt))
          .limit(50),
    ],
    [
      'POST /webhook-endpoints/{id}/recover: the discarded deliveries of the window, in event order',
      () =>
        db()
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
          .where(
            and(
              eq(webhookDeliveries.endpointId, someId),
              eq(webhookDeliveries.status, 'discarded'),
              between(webhookDeliveries.createdAt, new Date(0), new Date()),
            ),
          )
          .orderBy(asc(events.createdAt), asc(events.id), asc(webhookDeliveries.id)),
    ],
    [
      // The rows the UPDATE discards, by its condition (EXPLAIN takes no parenthesised UPDATE).
      'a destination disabled: its pending deliveries discarded',
      () =>
        db()
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(and(eq(webhookDeliveries.endpointId, someId), eq(webhookDeliveries.status, 'pending'))),
    ],
    [
      'a booking with table moves: the parties to move, locked in id order',
      () =>
        db()
          .select()
          .from(reservations)
          .where(sql`${reservations.id} in (${someId}::uuid, ${someId}::uuid)`)
          .orderBy(reservations.id)
          .for('update'),
    ],
  ])('%s', async (_name, build) => {
    expect(await largeTablesScannedWhole(build())).toEqual([]);
  });

  // A page of GET /reservations, with the service's own conditions.
  const anyKey: AuthContext = {
    keyId: someId,
    keyName: 'plans',
    organisationId: someId,
    kind: 'live',
    livemode: true,
    scopes: new Set(),
    venueIds: null,
    allowedOrigins: [],
    rateLimitPerMinute: null,
    revoked: false,
  };
  const reservationPage = (query: Omit<ReservationListQuery, 'cursorKey'>) =>
    db()
      .select()
      .from(reservations)
      .where(and(...reservationListFilters(anyKey, query)))
      .orderBy(asc(reservations.startsAt), asc(reservations.id))
      .limit(51);
  /** Read by an index whose condition names `column`, in page order (no sort, no filter on it). */
  const readByIndexOn = (plan: PlanNode, column: string) => {
    const nodes = nodesOf(plan);
    return (
      nodes.some((node) => node['Index Cond']?.includes(column)) &&
      !nodes.some((node) => /Sort/.test(node['Node Type']) || node.Filter?.includes(column))
    );
  };

  // Bounded by the venue alone, a page of a rare status would read every row of the other statuses
  // before it: a number that grows with the history.
  it.each([
    ['of a venue', { venueId: someId }],
    ['of an organisation', {}],
  ])('GET /reservations?status=<one status> %s reads rows of that status only, in page order', async (_name, scope) => {
    expect(readByIndexOn(await planOf(reservationPage({ ...scope, limit: 50, status: ['cancelled'] })), 'status')).toBe(true);
  });

  // By serviceDate alone, an organisation's page read every reservation before the window first. A
  // venue's window may also be read by (venue, serviceDate) and sorted: bounded by the window too.
  it.each([
    ['of an organisation', {}],
    ['of a venue', { venueId: someId }],
  ])('GET /reservations?from=&to= %s reads the window only', async (_name, scope) => {
    const nodes = nodesOf(await planOf(reservationPage({ ...scope, limit: 50, from: '2026-11-20', to: '2026-11-21' })));
    expect(nodes.some((node) => /starts_at >=|service_date >=/.test(node['Index Cond'] ?? ''))).toBe(true);
  });

  // By the organisation's index alone, a page read every other venue's or automation's deliveries first.
  it.each([
    ['venueId', 'venue_id', { venueId: someId }],
    ['automationId', 'automation_id', { automationId: someId }],
  ])("GET /webhook-deliveries?%s= reads that one's deliveries only", async (_name, column, filter) => {
    const page = db()
      .select()
      .from(webhookDeliveries)
      .where(and(...deliveryListFilters(anyKey, filter)))
      .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
      .limit(51);
    const nodes = nodesOf(await planOf(page));
    expect(nodes.some((node) => node['Index Cond']?.includes(column))).toBe(true);
  });

  // Keyed by serviceDate alone, the waiting entries of every venue were read for each event (a
  // hashed subplan of all of them in the read's generic plan): a number that grows with the platform.
  it("worker-events' read of whether anybody waits at an event's venue reads that venue's waiting entries only", async () => {
    const read = db()
      .select({ someoneWaits: someoneWaitsAt(events.venueId) })
      .from(events)
      .where(eq(events.id, someId));
    const entries = nodesOf(await planOf(read)).filter((node) => node['Relation Name'] === 'waitlist_entries');
    expect(entries.length).toBeGreaterThan(0);
    for (const node of entries) expect(node['Index Cond'], JSON.stringify(node)).toMatch(/venue_id = /);
  });

  it('detects a statement no index serves', async () => {
    expect(
      await largeTablesScannedWhole(
        db()
          .select()
          .from(events)
          .where(sql`${events.data}->>'x' = 'y'`),
      ),
    ).toEqual(['events']);
  });
});
