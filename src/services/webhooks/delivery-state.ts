import { and, eq, gt, inArray, isNull, lt, ne, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { db, prepareSql, type DbOrTx } from '../../db/client.js';
import { isConnectionError } from '../../lib/connection-errors.js';
import { createMicroBatcher, runEachAlone, type BatchOutcomes } from '../../lib/micro-batch.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import {
  automations,
  events,
  organisationWebhookSecrets,
  webhookDeliveries,
  webhookDeliveryAttempts,
  webhookEndpoints,
} from '../../db/schema/index.js';
import { reservationViewColumns, reservationViewGuestJoin, reservationViewTable } from '../reservations/reservation-view.js';
import type { DeliveryRow } from './delivery-json.js';

/**
 * Every change of a delivery row's state. Each update is conditional on the state it expects, so a
 * concurrent annulment, redelivery or duplicate job changes nothing it should not.
 */

const bump = () => ({ updatedAt: nextUpdatedAt(webhookDeliveries.updatedAt) });

// Under short aliases: a traced process exports this statement's text with the span of every
// delivery's read, and the tables' full names, repeated before each column, would be most of it.
const delivery = alias(webhookDeliveries, 'd');
const event = alias(events, 'e');
const automation = alias(automations, 'a');
const endpoint = alias(webhookEndpoints, 'w');
const secret = alias(organisationWebhookSecrets, 's');

/** The columns of a delivery's registered destination that an attempt uses (getMainEndpoint's row has them too). */
const destinationColumns = {
  id: endpoint.id,
  organisationId: endpoint.organisationId,
  url: endpoint.url,
  signatureScheme: endpoint.signatureScheme,
  isActive: endpoint.isActive,
  currentSecret: endpoint.currentSecret,
  previousSecret: endpoint.previousSecret,
  secretVersion: endpoint.secretVersion,
  previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
};

// Prepared once, on first use (never when the module is loaded): these run for every attempt, and
// building a statement is most of its cost.
const prepareContextStatement = () =>
  db()
    .select({
      delivery: {
        id: delivery.id,
        organisationId: delivery.organisationId,
        venueId: delivery.venueId,
        runId: delivery.runId,
        idempotencyKey: delivery.idempotencyKey,
        destination: delivery.destination,
        endpointId: delivery.endpointId,
        url: delivery.url,
        status: delivery.status,
        attempts: delivery.attempts,
        payload: delivery.payload,
      },
      event: {
        id: event.id,
        type: event.type,
        createdAt: event.createdAt,
        venueId: event.venueId,
        data: event.data,
        subjectType: event.subjectType,
        subjectId: event.subjectId,
      },
      automation: { name: automation.name },
      endpoint: destinationColumns,
      organisationSecret: {
        currentSecret: secret.currentSecret,
        previousSecret: secret.previousSecret,
        secretVersion: secret.secretVersion,
        previousSecretExpiresAt: secret.previousSecretExpiresAt,
      },
      ...reservationViewColumns,
    })
    .from(delivery)
    .innerJoin(event, eq(event.id, delivery.eventId))
    .innerJoin(automation, eq(automation.id, delivery.automationId))
    .leftJoin(endpoint, eq(endpoint.id, delivery.endpointId))
    .leftJoin(secret, eq(secret.organisationId, delivery.organisationId))
    // The current state of a reservation whose body is still to be built, in the same round trip.
    .leftJoin(
      reservationViewTable,
      and(isNull(delivery.payload), eq(event.subjectType, 'reservation'), eq(reservationViewTable.id, event.subjectId)),
    )
    .leftJoin(reservationViewGuestJoin.table, reservationViewGuestJoin.on)
    .where(eq(delivery.id, sql.placeholder('id')))
    .prepare('read_webhook_delivery_context');
let contextStatement: ReturnType<typeof prepareContextStatement> | undefined;

/**
 * Everything an attempt needs, in one round trip: the delivery (its state and stored body), the
 * event, the automation, the destination endpoint, the organisation secret and, for a reservation
 * event whose body is still to be built, the reservation view (`reservationViewOf`). Undefined when
 * the delivery does not exist.
 */
export async function readDeliveryContext(id: string) {
  const [row] = await (contextStatement ??= prepareContextStatement()).execute({ id });
  return row;
}

export type DeliveryContext = NonNullable<Awaited<ReturnType<typeof readDeliveryContext>>>;

const prepareClaimStatement = () =>
  db()
    .update(webhookDeliveries)
    .set({
      attempts: sql`${webhookDeliveries.attempts} + 1`,
      lifetimeAttempts: sql`${webhookDeliveries.lifetimeAttempts} + 1`,
      lastAttemptAt: sql`clock_timestamp()`,
      payload: sql`coalesce(${webhookDeliveries.payload}, ${sql.placeholder('payload')}::text)`,
      ...bump(),
    })
    .where(and(eq(webhookDeliveries.id, sql.placeholder('id')), eq(webhookDeliveries.status, 'pending')))
    .returning({
      attempts: webhookDeliveries.attempts,
      lifetimeAttempts: webhookDeliveries.lifetimeAttempts,
      startedAt: webhookDeliveries.lastAttemptAt,
      payload: webhookDeliveries.payload,
    })
    .prepare('claim_webhook_attempt');
let claimStatement: ReturnType<typeof prepareClaimStatement> | undefined;

export interface ClaimedAttempt {
  /** The attempt's number in the current cycle (1 to 5). */
  attempts: number;
  /** Its number over the delivery's whole life: the attempt log's `attempt`. */
  lifetimeAttempts: number;
  startedAt: Date;
  payload: string;
}

/**
 * Starts attempt `attempts + 1` of a pending delivery and, in the same statement, keeps the body
 * built for its first attempt: a body already stored wins and is the one returned, so every attempt
 * sends the same bytes. Counting before sending means an attempt cut short by a crash still counts
 * (it has no row in the attempt log: its outcome was never known). Undefined when the delivery is
 * no longer pending.
 */
export async function claimAttempt(id: string, payload: string): Promise<ClaimedAttempt | undefined> {
  const [row] = await (claimStatement ??= prepareClaimStatement()).execute({ id, payload });
  return row
    ? {
        attempts: row.attempts,
        lifetimeAttempts: row.lifetimeAttempts,
        startedAt: row.startedAt ?? new Date(),
        payload: row.payload ?? payload,
      }
    : undefined;
}

export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  /** The destination of the attempt, kept on the row ("same destination" for a redelivery). */
  endpointId: string | null;
  url: string | null;
}

/** One row of the attempt log. */
export type AttemptLogEntry = Omit<typeof webhookDeliveryAttempts.$inferSelect, 'deliveryId'>;

/** The `traceparent` recorded with an attempt of a delivery (null: none, or made while tracing was off). */
export async function readAttemptTraceparent(deliveryId: string, attempt: number): Promise<string | null> {
  const [row] = await db()
    .select({ traceparent: webhookDeliveryAttempts.traceparent })
    .from(webhookDeliveryAttempts)
    .where(and(eq(webhookDeliveryAttempts.deliveryId, deliveryId), eq(webhookDeliveryAttempts.attempt, attempt)));
  return row?.traceparent ?? null;
}

export interface AttemptRecord {
  deliveryId: string;
  outcome: AttemptOutcome;
  log: AttemptLogEntry;
  /** The registered destination the request was made to, whose health it counts for; null when none was. */
  reachedEndpointId: string | null;
}

export interface RecordedAttempt {
  /** The delivery took the outcome (false: it was concluded meanwhile, e.g. annulled). */
  applied: boolean;
  /** The destination has now failed long enough to be disabled (disableFailingEndpoint decides under its lock). */
  disableDue: boolean;
}

/**
 * The thresholds of docs/webhooks.md "Endpoint health" (WEBHOOK_DISABLE_AFTER_FAILURES,
 * WEBHOOK_DISABLE_AFTER_MINUTES): this many failed attempts in a row, and this long since the first.
 */
export interface EndpointHealthThresholds {
  failures: number;
  minutes: number;
}

/** A destination still active and not already disabled that has reached the thresholds (values, or placeholders of a prepared statement). */
export function failingTooLong(failures: number | SQL, minutes: number | SQL): SQL {
  return sql`${webhookEndpoints.isActive} and ${webhookEndpoints.disabledAt} is null
  and ${webhookEndpoints.consecutiveFailures} >= ${failures}
  and ${webhookEndpoints.failingSince} <= clock_timestamp() - make_interval(mins => ${minutes})`;
}

/** A value of the prepared record statements, typed in SQL (the values are given as the driver sends them). */
const param = (name: string, type: `${'uuid' | 'int' | 'text' | 'timestamptz'}${'' | '[]'}`) =>
  sql`${sql.placeholder(name)}::${sql.raw(type)}`;

/** The attempt's destination and answer, kept on the delivery row ("same destination" for a redelivery). */
const outcomeColumns = { lastResponseStatus: param('status', 'int'), endpointId: param('endpointId', 'uuid'), url: param('url', 'text') };

/**
 * In a record's statement, the delivery's row is changed after its destination's (the `health`
 * CTE's), as disableFailingEndpoint changes them: the destination, then its pending deliveries. In
 * the other order a record held its delivery and waited for the destination that a disabling held
 * while it waited for that delivery, a deadlock PostgreSQL broke after a second, failing one side (a
 * destination failing under load was disabled seconds late, its deliveries exhausted their attempts
 * meanwhile). A CTE runs when a statement first reads it: this condition reads `health`.
 */
const afterHealth = sql`(select count(*) from health) >= 0`;

/**
 * A 2xx answer is the truth, even if the delivery was annulled while the request was under way: the
 * row `id` names becomes delivered with the attempt's destination and answer (`outcome`, its values
 * in SQL), unless it is delivered already.
 */
const deliveredChange = (outcome: Record<keyof typeof outcomeColumns, SQL>, id: SQL) => ({
  set: { status: 'delivered' as const, ...outcome, lastError: null, nextAttemptAt: null, discardReason: null, ...bump() },
  where: and(eq(webhookDeliveries.id, id), ne(webhookDeliveries.status, 'delivered'), afterHealth),
});

const concludeDelivered = () => {
  const { set, where } = deliveredChange(outcomeColumns, param('deliveryId', 'uuid'));
  return db().update(webhookDeliveries).set(set).where(where).returning({ id: webhookDeliveries.id });
};

/** A failed attempt: pending with its next moment, or discarded when no attempt follows; only while pending. */
const lastAttempt = sql`${param('nextAttemptAt', 'timestamptz')} is null`;
const concludeFailed = () =>
  db()
    .update(webhookDeliveries)
    .set({
      ...outcomeColumns,
      lastError: param('error', 'text'),
      nextAttemptAt: param('nextAttemptAt', 'timestamptz'),
      status: sql`case when ${lastAttempt} then 'discarded' else ${webhookDeliveries.status} end`,
      discardReason: sql`case when ${lastAttempt} then 'max_attempts' else ${webhookDeliveries.discardReason} end`,
      ...bump(),
    })
    .where(and(eq(webhookDeliveries.id, param('deliveryId', 'uuid')), eq(webhookDeliveries.status, 'pending'), afterHealth))
    .returning({ id: webhookDeliveries.id });

/**
 * The destination's health after an attempt made to it (none when `reachedEndpointId` is null;
 * `reached`: the destinations of several attempts instead). A disabled destination's health stays
 * as it was disabled (an attempt under way then still finishes) until it is enabled again. A
 * success rewrites a healthy row at most once a second: every delivery to a busy partner would
 * otherwise queue on this one row's lock.
 */
function endpointHealthUpdate(ok: boolean, reached: SQL = eq(webhookEndpoints.id, param('reachedEndpointId', 'uuid'))) {
  const endpoint = and(reached, isNull(webhookEndpoints.disabledAt));
  if (ok) {
    return db()
      .update(webhookEndpoints)
      .set({ consecutiveFailures: 0, failingSince: null, lastSuccessAt: sql`clock_timestamp()` })
      .where(
        and(
          endpoint,
          or(
            gt(webhookEndpoints.consecutiveFailures, 0),
            isNull(webhookEndpoints.lastSuccessAt),
            lt(webhookEndpoints.lastSuccessAt, sql`clock_timestamp() - interval '1 second'`),
          ),
        ),
      )
      .returning({ disableDue: sql<boolean>`false`.as('disable_due') });
  }
  return db()
    .update(webhookEndpoints)
    .set({
      consecutiveFailures: sql`${webhookEndpoints.consecutiveFailures} + 1`,
      failingSince: sql`coalesce(${webhookEndpoints.failingSince}, clock_timestamp())`,
    })
    .where(endpoint)
    .returning({
      disableDue: sql<boolean>`${failingTooLong(param('disableAfterFailures', 'int'), param('disableAfterMinutes', 'int'))}`.as(
        'disable_due',
      ),
    });
}

const logAttempt = () =>
  db()
    .insert(webhookDeliveryAttempts)
    .values({
      deliveryId: param('deliveryId', 'uuid'),
      attempt: param('attempt', 'int'),
      startedAt: param('startedAt', 'timestamptz'),
      durationMs: param('durationMs', 'int'),
      responseStatus: param('status', 'int'),
      error: param('attemptError', 'text'),
      responseBodyExcerpt: param('excerpt', 'text'),
      traceparent: param('traceparent', 'text'),
    });

/**
 * Records one attempt in one statement (so in one transaction): the delivery's new state
 * (`conclude`, matching only while the delivery may take this outcome), the attempt log's row and
 * the destination's health. The log and the health take the attempt even when the delivery no
 * longer does: the request was made. Built once: this runs for every attempt.
 */
function prepareRecord(conclude: SQLWrapper, ok: boolean) {
  // drizzle puts an embedded query builder in parentheses itself.
  return prepareSql<{ applied: boolean; disableDue: boolean }>(
    sql`with health as ${endpointHealthUpdate(ok)}, concluded as ${conclude}, logged as ${logAttempt()}
      select exists (select from concluded) as applied, coalesce((select bool_or(disable_due) from health), false) as "disableDue"`,
  );
}

const prepareRecordStatements = () => ({
  delivered: prepareRecord(concludeDelivered(), true),
  failed: prepareRecord(concludeFailed(), false),
});
let recordStatements: ReturnType<typeof prepareRecordStatements> | undefined;

async function recordAttempt(
  kind: keyof ReturnType<typeof prepareRecordStatements>,
  { deliveryId, outcome, log, reachedEndpointId }: AttemptRecord,
  nextAttemptAt: Date | null,
  health: EndpointHealthThresholds | null,
) {
  const [row] = await (recordStatements ??= prepareRecordStatements())[kind]({
    deliveryId,
    status: outcome.status,
    error: outcome.error,
    endpointId: outcome.endpointId,
    url: outcome.url,
    nextAttemptAt: nextAttemptAt?.toISOString() ?? null,
    attempt: log.attempt,
    startedAt: log.startedAt.toISOString(),
    durationMs: log.durationMs,
    attemptError: log.error,
    excerpt: log.responseBodyExcerpt,
    traceparent: log.traceparent,
    reachedEndpointId,
    disableAfterFailures: health?.failures,
    disableAfterMinutes: health?.minutes,
  });
  return { applied: row?.applied ?? false, disableDue: row?.disableDue ?? false };
}

/** A 2xx answer is the truth, even if the delivery was annulled while the request was under way. */
export function recordDelivered(record: AttemptRecord): Promise<RecordedAttempt> {
  return recordAttempt('delivered', record, null, null);
}

/**
 * Several attempts' records as rows of `i` (the statement's first CTE): one array parameter per
 * field, whatever the number of records, so that the statement's text and plan stay the same. The
 * instants go as text: drizzle hands the driver's timestamptz[] values over unserialised.
 */
const recordRows = sql`select * from unnest(${param('deliveryIds', 'uuid[]')}, ${param('statuses', 'int[]')},
  ${param('endpointIds', 'uuid[]')}, ${param('urls', 'text[]')}, ${param('attempts', 'int[]')}, ${param('startedAts', 'text[]')}::timestamptz[],
  ${param('durations', 'int[]')}, ${param('excerpts', 'text[]')}, ${param('traceparents', 'text[]')}, ${param('reachedEndpointIds', 'uuid[]')})
  as i(delivery_id, status, endpoint_id, url, attempt, started_at, duration_ms, excerpt, traceparent, reached_endpoint_id)`;

/** recordDelivered for several deliveries in one statement (the rows of `i`). */
const prepareDeliveredRows = () => {
  const deliveredRow = deliveredChange(
    { lastResponseStatus: sql`i.status`, endpointId: sql`i.endpoint_id`, url: sql`i.url` },
    sql`i.delivery_id`,
  );
  return prepareSql<{ recorded: number }>(
    sql`with i as (${recordRows}),
      health as ${endpointHealthUpdate(true, sql`${webhookEndpoints.id} in (select reached_endpoint_id from i)`)},
      concluded as ${db()
        .update(webhookDeliveries)
        .set(deliveredRow.set)
        .from(sql`i`)
        .where(deliveredRow.where)
        .returning({ id: webhookDeliveries.id })},
      logged as ${db()
        .insert(webhookDeliveryAttempts)
        .select(sql`select delivery_id, attempt, started_at, duration_ms, status, null::text, excerpt, traceparent from i`)}
      select count(*)::int as recorded from concluded`,
  );
};
let deliveredRowsStatement: ReturnType<typeof prepareDeliveredRows> | undefined;

/**
 * recordDelivered for several deliveries in one statement, so in one transaction: one commit for
 * them all, where a statement per delivery cost PostgreSQL about three times the CPU per record at
 * four a statement (docs/benchmarks.md). A record the statement cannot take (its delivery deleted
 * meanwhile: the attempt log's foreign key) would fail the others with it: when the statement
 * fails, each record is written again alone, and only its own call fails (not when the database is
 * unreachable: then every call fails with that).
 */
export async function recordDeliveredAttempts(records: readonly AttemptRecord[]): Promise<BatchOutcomes<AttemptRecord>> {
  if (records.length === 1) {
    await recordDelivered(records[0]);
    return new Map();
  }
  try {
    await (deliveredRowsStatement ??= prepareDeliveredRows())({
      deliveryIds: records.map((r) => r.deliveryId),
      statuses: records.map((r) => r.outcome.status),
      endpointIds: records.map((r) => r.outcome.endpointId),
      urls: records.map((r) => r.outcome.url),
      attempts: records.map((r) => r.log.attempt),
      startedAts: records.map((r) => r.log.startedAt.toISOString()),
      durations: records.map((r) => r.log.durationMs),
      excerpts: records.map((r) => r.log.responseBodyExcerpt),
      traceparents: records.map((r) => r.log.traceparent),
      reachedEndpointIds: records.map((r) => r.reachedEndpointId),
    });
    return new Map();
  } catch (err) {
    // An unreachable database fails them all at once, as it would each alone.
    if (isConnectionError(err)) throw err;
    return runEachAlone(records, recordDelivered);
  }
}

/**
 * recordDelivered as worker-webhooks calls it: the deliveries of a process that conclude within
 * `lingerMs` of each other are recorded together (recordDeliveredAttempts), fifty at most a
 * statement. A delivered job completes that much later; its partner has its webhook already, and
 * the destination's slot was given back before.
 */
export function batchDeliveredRecords(lingerMs: number): (record: AttemptRecord) => Promise<void> {
  const batcher = createMicroBatcher(recordDeliveredAttempts, { maxSize: 50, lingerMs });
  return (record) => batcher.submit(record);
}

/** A failed attempt: pending with its next moment, or discarded after the last one (`nextAttemptAt` null); not applied when no longer pending. */
export function recordFailure(
  record: AttemptRecord,
  nextAttemptAt: Date | null,
  health: EndpointHealthThresholds,
): Promise<RecordedAttempt> {
  return recordAttempt('failed', record, nextAttemptAt, health);
}

/**
 * Whether the current cycle of a delivery has an attempt whose outcome is recorded (a failure
 * schedules the next attempt after the last one started), or the delivery is concluded or gone.
 */
export async function hasAttemptOutcome(id: string): Promise<boolean> {
  const [row] = await db()
    .select({
      answered: sql<boolean>`${webhookDeliveries.status} <> 'pending' or (${webhookDeliveries.attempts} > 0 and ${webhookDeliveries.nextAttemptAt} > ${webhookDeliveries.lastAttemptAt})`,
    })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.id, id));
  return row?.answered ?? true;
}

/** Which concluded deliveries a new cycle may start for. */
export type Reopenable = 'concluded' | 'discarded' | 'exhausted';

const reopenable: Record<Reopenable, SQL> = {
  // A redelivery: delivered or discarded, annulled ones included.
  concluded: inArray(webhookDeliveries.status, ['delivered', 'discarded']),
  // A recovery: whatever was not delivered.
  discarded: eq(webhookDeliveries.status, 'discarded'),
  // A Bull Board retry of a failed job: discarded after its last attempt only.
  exhausted: and(eq(webhookDeliveries.status, 'discarded'), eq(webhookDeliveries.discardReason, 'max_attempts'))!,
};

/**
 * A new cycle of attempts for concluded deliveries, same key, body and destination: `attempts`
 * restarts at 0 (the attempt log keeps counting). Returns the rows reopened; a delivery that is not
 * `which` (pending again meanwhile, or of another kind) is left alone.
 */
export async function reopenDeliveries(ids: string[], which: Reopenable, conn: DbOrTx = db()): Promise<DeliveryRow[]> {
  if (!ids.length) return [];
  return conn
    .update(webhookDeliveries)
    .set({ status: 'pending', attempts: 0, discardReason: null, nextAttemptAt: new Date(), ...bump() })
    .where(and(inArray(webhookDeliveries.id, ids), reopenable[which]))
    .returning();
}

/**
 * Discards the deliveries that wait for an attempt: those of an automation leaving `active`, or those
 * aimed at a destination being disabled. Returns their ids, whose jobs the caller removes after commit.
 */
export async function annulPendingDeliveries(of: { automationId: string } | { endpointId: string }, conn: DbOrTx): Promise<string[]> {
  const [owner, reason] =
    'automationId' in of
      ? [eq(webhookDeliveries.automationId, of.automationId), 'automation_inactive' as const]
      : [eq(webhookDeliveries.endpointId, of.endpointId), 'endpoint_disabled' as const];
  const rows = await conn
    .update(webhookDeliveries)
    .set({ status: 'discarded', discardReason: reason, nextAttemptAt: null, ...bump() })
    .where(and(owner, eq(webhookDeliveries.status, 'pending')))
    .returning({ id: webhookDeliveries.id });
  return rows.map((r) => r.id);
}
