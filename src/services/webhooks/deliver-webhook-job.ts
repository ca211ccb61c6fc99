import type { Logger } from 'pino';
import { maxDeliveryAttempts, retryDelayMs, type RetrySchedule } from '../../lib/webhook-backoff.js';
import { signedHeaders, type SignatureScheme } from '../../lib/webhook-signature.js';
import { countWebhookDelivered, countWebhookFailure } from '../../metrics/counters.js';
import { destinationOf, postponementMs } from '../../lib/webhook-destination.js';
import { promoteDeliveryJob, type WebhookDeliveryJob } from '../../jobs/webhook-delivery-job.js';
import { reservationViewOf } from '../reservations/reservation-view.js';
import { getCurrentEventData } from './current-event-data.js';
import type { DestinationSlot, DestinationSlots } from './destination-slots.js';
import {
  claimAttempt,
  hasAttemptOutcome,
  readAttemptTraceparent,
  readDeliveryContext,
  recordFailure,
  reopenDeliveries,
  type AttemptRecord,
  type ClaimedAttempt,
  type DeliveryContext,
  type EndpointHealthThresholds,
} from './delivery-state.js';
import { disableFailingEndpoint } from './endpoint-health.js';
import { serialiseEnvelope } from './envelope.js';
import { postWebhook, type WebhookOutcome, type WebhookTargetSettings } from './post-webhook.js';
import { getOrganisationSecretState, secretStateOf, type SigningSecretBox } from './signing-secrets.js';
import { getMainEndpoint } from './webhook-endpoint-service.js';
import { activeTraceCarrier, inSpan, isTracing } from '../../tracing/tracing.js';

/**
 * What became of one run of a delivery's job; src/roles/webhook-delivery-handler.ts tells BullMQ.
 * `discarded` ends the job: with a message when its last attempt failed (a failed job, the discard
 * list of Bull Board), without one when there is nothing (more) to send (delivered or annulled
 * meanwhile, the row gone, the destination just disabled). `postponed`: the job is already in the
 * delayed set, no attempt consumed.
 */
export type DeliveryOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; attempt: number; at: Date; message: string }
  | { kind: 'discarded'; message: string | null }
  | { kind: 'postponed' };

/**
 * What a worker-webhooks process delivers with besides its slots: how it schedules retries, when it
 * disables a destination that keeps failing, its signing secrets, where it may send and how it
 * records a delivered attempt.
 */
export interface DeliveryWorker {
  retry: RetrySchedule;
  health: EndpointHealthThresholds;
  secrets: SigningSecretBox;
  targets: WebhookTargetSettings;
  /** Records a 2xx answer: recordDelivered, or the process's batch of them (batchDeliveredRecords). */
  recordDelivered: (record: AttemptRecord) => Promise<void>;
}

/** What the steps may do to the job that carries the delivery (a BullMQ job, behind the adapter). */
export interface DeliveryJobControl {
  id: string;
  data: WebhookDeliveryJob;
  /**
   * How many earlier runs of the job ended without consuming an attempt (postponed for a slot or a
   * predecessor, or while the database was unreachable): BullMQ counts the runs, so the job's data
   * need not be written to count them.
   */
  runsWithoutAttempt: number;
  updateData(data: WebhookDeliveryJob): Promise<void>;
  /** Back from the delayed set, the job runs behind the jobs in line (src/queues/fair-share.ts). */
  moveBehindTheLine(): Promise<void>;
  moveToDelayed(at: number): Promise<void>;
  log(line: string): Promise<unknown>;
}

const nothingToSend: DeliveryOutcome = { kind: 'discarded', message: null };
const postponed: DeliveryOutcome = { kind: 'postponed' };
const isOutcome = (value: object): value is DeliveryOutcome => 'kind' in value;

/** `2026-11-24T20:01:00Z`: to the second, as people read it in a job's error. */
const toSecond = (at: Date) => at.toISOString().replace(/\.\d{3}Z$/, 'Z');

type Destination = { endpointId: string | null; url: string | null } & ({ secrets: string[]; scheme: SignatureScheme } | { error: string });

/** Where this attempt goes and which secrets sign it; an unusable destination is a failed attempt. */
async function resolveDestination(
  { delivery, endpoint: pinned, organisationSecret }: DeliveryContext,
  secrets: SigningSecretBox,
): Promise<Destination> {
  if (delivery.destination === 'url') {
    const state = organisationSecret
      ? secretStateOf(organisationSecret)
      : await getOrganisationSecretState(delivery.organisationId, secrets);
    return { endpointId: null, url: delivery.url, secrets: secrets.open(state), scheme: 'service-v1' };
  }
  // The venue's main destination is pinned at its first use: a redelivery goes to the same one.
  const endpoint = delivery.endpointId ? pinned : await getMainEndpoint(delivery.venueId);
  if (!endpoint || endpoint.organisationId !== delivery.organisationId) {
    const error = delivery.endpointId ? `webhook endpoint ${delivery.endpointId} no longer exists` : 'the venue has no webhook endpoint';
    return { endpointId: delivery.endpointId, url: delivery.url, error };
  }
  if (!endpoint.isActive) return { endpointId: endpoint.id, url: endpoint.url, error: `webhook endpoint ${endpoint.id} is inactive` };
  return {
    endpointId: endpoint.id,
    url: endpoint.url,
    secrets: secrets.open(secretStateOf(endpoint)),
    scheme: endpoint.signatureScheme,
  };
}

/** The body of the first attempt, from the subject's current state (the claim keeps it byte for byte). */
async function buildBody(context: DeliveryContext): Promise<string> {
  const { delivery, event, automation } = context;
  return serialiseEnvelope({
    idempotencyKey: delivery.idempotencyKey,
    eventId: event.id,
    type: event.type,
    createdAt: event.createdAt,
    venueId: event.venueId,
    data: await getCurrentEventData(event, reservationViewOf(context)),
    automation: { name: automation.name, runId: delivery.runId },
  });
}

/**
 * A job whose destination has no free slot (and no room to wait for one in this process) waits in
 * the delayed set without consuming an attempt (neither BullMQ's nor the row's: moveToDelayed skips
 * BullMQ's count, and the row counts only claimed attempts), for about its turn among the jobs
 * waiting for that destination (DestinationSlots.postpone); the release of a slot wakes the oldest
 * sooner. The job remembers its destination so that its next run takes a slot of it first: its data
 * is written only when it names another one (a job enqueued for a destination, the backlog's case,
 * is postponed without that round trip).
 */
async function postpone(slots: DestinationSlots, job: DeliveryJobControl, destination: string): Promise<DeliveryOutcome> {
  // Started while the slots look up the job's place; awaited before the move (a failure is thrown there).
  const updated = Promise.all([
    job.data.destination === destination ? undefined : job.updateData({ ...job.data, destination }),
    // Back from the delayed set, it runs behind the jobs in line (src/queues/fair-share.ts): with a
    // fair tag, taken now or at enqueue, a saturated partner's backlog would come back ahead of
    // every job tagged while it waited, again and again.
    job.moveBehindTheLine(),
  ]);
  updated.catch(() => {});
  await slots.postpone(destination, job.id, job.runsWithoutAttempt, async (delayMs) => {
    await updated;
    await job.moveToDelayed(Date.now() + delayMs);
  });
  return postponed;
}

/**
 * A delivery of a recovery sent in order whose predecessor has no outcome yet: it waits in the
 * delayed set without consuming an attempt, until the predecessor's job wakes it (or the doubling
 * wait of postponementMs ends, should that wake-up be lost).
 */
async function waitForPredecessor(job: DeliveryJobControl): Promise<DeliveryOutcome> {
  await job.moveToDelayed(Date.now() + postponementMs(job.runsWithoutAttempt, Math.random()));
  return postponed;
}

/** A delivery ready for its attempt: its row, event and automation, where it goes, and the slot taken for it. */
export interface PreparedDelivery {
  context: DeliveryContext;
  destination: Destination;
  /** A slot of the destination the job expected, taken before the row was read; null when none was expected. */
  slot: DestinationSlot | null;
}

/**
 * Step 1: whether this run attempts anything. The destination it went to last time, or was enqueued
 * for: a slot of it is taken first (postponed, before the database is read, when none frees up), so
 * that a run never reads the row only to find the slots gone meanwhile. Then the row: gone, or not
 * pending (delivered or annulled: nothing to do; discarded after its last attempt and retried from
 * Bull Board: a redelivery), or waiting for its predecessor; the slot is given back in each case.
 */
export async function prepareDelivery(
  slots: DestinationSlots,
  job: DeliveryJobControl,
  secrets: SigningSecretBox,
): Promise<PreparedDelivery | DeliveryOutcome> {
  const { destination: expected } = job.data;
  const slot = expected ? await slots.acquire(expected, job.id) : null;
  if (expected && !slot) return postpone(slots, job, expected);
  let prepared: PreparedDelivery | DeliveryOutcome | undefined;
  try {
    prepared = await readPreparedDelivery(job, secrets, slot);
    return prepared;
  } finally {
    if (slot && (prepared === undefined || isOutcome(prepared))) await slots.release(slot);
  }
}

async function readPreparedDelivery(
  job: DeliveryJobControl,
  secrets: SigningSecretBox,
  slot: DestinationSlot | null,
): Promise<PreparedDelivery | DeliveryOutcome> {
  const { deliveryId, after } = job.data;
  const context = await readDeliveryContext(deliveryId);
  if (!context) return nothingToSend;
  if (context.delivery.status !== 'pending' && !(await reopenDeliveries([deliveryId], 'exhausted')).length) return nothingToSend;
  if (after && context.delivery.attempts === 0 && !(await hasAttemptOutcome(after))) return waitForPredecessor(job);
  return { context, destination: await resolveDestination(context, secrets), slot };
}

/** A made attempt: the row's claim and what the destination answered. */
export interface AttemptedDelivery extends PreparedDelivery {
  claimed: ClaimedAttempt;
  sent: WebhookOutcome;
  /** The `traceparent` of the attempt's span (its client span when a request was made); null while tracing is off. */
  traceparent: string | null;
}

/**
 * The POST of an attempt in its client span (docs/operations.md "Tracing"), whose `traceparent` (and
 * `tracestate`) the request carries for the partner to continue. An attempt after the delivery's
 * first runs in a trace of its own (its job's: src/queues/start-worker.ts), linked to the span of
 * the attempt before, as its attempt log recorded it.
 */
async function postInSpan(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  deliveryId: string,
  claimed: ClaimedAttempt,
  allowPrivate: boolean,
): Promise<{ sent: WebhookOutcome; traceparent: string | null }> {
  if (!isTracing()) return { sent: await postWebhook({ url, headers, body, allowPrivate }), traceparent: null };
  const attempt = claimed.lifetimeAttempts;
  const before = attempt > 1 ? await readAttemptTraceparent(deliveryId, attempt - 1) : null;
  let host: string | undefined;
  try {
    host = new URL(url).hostname;
  } catch {
    // An address postWebhook refuses; the span still names its attempt.
  }
  const start = {
    kind: 'client',
    attributes: {
      'http.request.method': 'POST',
      'server.address': host,
      'floorline.webhook.delivery_id': deliveryId,
      'floorline.webhook.attempt': attempt,
    },
    links: before ? [{ traceparent: before }] : [],
  } as const;
  return inSpan('POST webhook', start, async (span) => {
    const trace = span.carrier();
    const sent = await postWebhook({ url, headers: { ...headers, ...trace }, body, allowPrivate });
    span.setAttributes({ 'http.response.status_code': sent.status });
    if (!sent.ok) span.fail(sent.summary);
    return { sent, traceparent: trace.traceparent ?? null };
  });
}

/**
 * Step 2: one attempt, within the destination's slots (none free: postponed). The row claims the
 * attempt and keeps the body (built now at the first attempt) before the signed POST; an unusable
 * destination fails at once and takes no slot. The row is the truth: it counts the attempts, also
 * those cut short by a crash.
 */
export async function attemptDelivery(
  slots: DestinationSlots,
  job: DeliveryJobControl,
  prepared: PreparedDelivery,
  targets: WebhookTargetSettings,
): Promise<AttemptedDelivery | DeliveryOutcome> {
  const { context, destination } = prepared;
  const origin = 'error' in destination ? null : destinationOf(destination.url ?? '');
  let slot = prepared.slot;
  // The row names another destination than the job expected (its endpoint changed), or none usable.
  if (slot && slot.destination !== origin) {
    await slots.release(slot);
    slot = null;
  }
  if (origin && !slot) slot = await slots.acquire(origin, job.id);
  if (origin && !slot) return postpone(slots, job, origin);
  try {
    const claimed = await claimAttempt(job.data.deliveryId, context.delivery.payload ?? (await buildBody(context)));
    if (!claimed) return nothingToSend; // concluded meanwhile (annulled, or by a duplicate of this job)
    const body = Buffer.from(claimed.payload, 'utf8');
    if ('error' in destination) {
      const sent = { ok: false, status: null, error: destination.error, summary: destination.error, durationMs: 0, bodyExcerpt: null };
      return { ...prepared, claimed, sent, traceparent: activeTraceCarrier()?.traceparent ?? null };
    }
    const headers = signedHeaders(destination.scheme, destination.secrets, context.delivery.idempotencyKey, body);
    return {
      ...prepared,
      claimed,
      ...(await postInSpan(destination.url ?? '', headers, body, job.data.deliveryId, claimed, targets.WEBHOOKS_ALLOW_PRIVATE_TARGETS)),
    };
  } finally {
    if (slot) await slots.release(slot);
  }
}

/**
 * Step 3: the outcome recorded (delivery row, attempt log, destination health in one statement), a
 * failed attempt's line in the job's log, the next delivery of an ordered recovery woken, the
 * destination disabled if due; then what the job does next.
 */
export async function concludeDelivery(
  job: DeliveryJobControl,
  attempted: AttemptedDelivery,
  log: Logger,
  worker: DeliveryWorker,
): Promise<DeliveryOutcome> {
  const { context, destination, claimed, sent, traceparent } = attempted;
  const { deliveryId, next } = job.data;
  const attempt = claimed.attempts;
  // Only a request made to a registered destination counts for its health.
  const reachedEndpointId = 'error' in destination ? null : destination.endpointId;
  const record: AttemptRecord = {
    deliveryId,
    outcome: { status: sent.status, error: sent.error, endpointId: destination.endpointId, url: destination.url },
    reachedEndpointId,
    log: {
      attempt: claimed.lifetimeAttempts,
      startedAt: claimed.startedAt,
      durationMs: sent.durationMs,
      responseStatus: sent.status,
      error: sent.ok ? null : sent.summary,
      responseBodyExcerpt: sent.bodyExcerpt,
      traceparent,
    },
  };
  // The next delivery of a recovery sent in order waits for this outcome (best effort: it also
  // comes back on its own).
  const wakeNext = () => {
    if (next && attempt === 1) void promoteDeliveryJob(next).catch(() => false);
  };
  if (sent.ok) {
    // No line in the job's log: a delivered job is removed on completion, its log with it.
    await worker.recordDelivered(record);
    wakeNext();
    countWebhookDelivered(context.event.createdAt);
    return { kind: 'delivered' };
  }

  // One line per failed attempt in the job's log (Bull Board); the row is the truth, so a line Redis
  // refuses is not worth failing the attempt for.
  const logged = job
    .log(`attempt ${attempt} of ${maxDeliveryAttempts}: ${sent.summary}${'error' in destination ? '' : ` in ${sent.durationMs} ms`}`)
    .catch(() => 0);
  const delay = retryDelayMs(attempt, worker.retry.backoffScale);
  const nextAttemptAt = delay < 0 ? null : new Date(Date.now() + delay);
  const [recorded] = await Promise.all([recordFailure(record, nextAttemptAt, worker.health), logged]);
  wakeNext();
  countWebhookFailure(delay < 0);
  const disabled = recorded.disableDue && reachedEndpointId ? await disableFailingEndpoint(reachedEndpointId, worker.health, log) : false;
  if (!recorded.applied) return nothingToSend; // annulled while the request was under way
  if (!nextAttemptAt) return { kind: 'discarded', message: `${sent.summary} (attempt ${attempt} of ${maxDeliveryAttempts})` };
  // Disabling discarded this delivery and removed the other jobs of the destination; this one, which
  // cannot be removed while it runs, ends here and is removed on completion.
  if (disabled) return nothingToSend;
  return {
    kind: 'retry',
    attempt,
    at: nextAttemptAt,
    message: `${sent.summary} (attempt ${attempt} of ${maxDeliveryAttempts}, next at ${toSecond(nextAttemptAt)})`,
  };
}

/** worker-webhooks: one run of a delivery's job, prepare → attempt → conclude. */
export async function deliverWebhookJob(
  slots: DestinationSlots,
  job: DeliveryJobControl,
  log: Logger,
  worker: DeliveryWorker,
): Promise<DeliveryOutcome> {
  const prepared = await prepareDelivery(slots, job, worker.secrets);
  if (isOutcome(prepared)) return prepared;
  const attempted = await attemptDelivery(slots, job, prepared, worker.targets);
  if (isOutcome(attempted)) return attempted;
  return concludeDelivery(job, attempted, log, worker);
}
