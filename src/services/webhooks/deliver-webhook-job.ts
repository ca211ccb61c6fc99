import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { config } from '../../config.js';
import { maxDeliveryAttempts, retryDelayMs } from '../../lib/webhook-backoff.js';
import { signedHeaders, type SignatureScheme } from '../../lib/webhook-signature.js';
import { countWebhookDelivered, countWebhookFailure } from '../../metrics/metrics.js';
import { destinationOf, postponementMs } from '../../lib/webhook-destination.js';
import { behindTheLine } from '../../queues/fair-share.js';
import { promoteDeliveryJob, type WebhookDeliveryJob } from '../../jobs/webhook-delivery-job.js';
import { reservationViewOf } from '../reservations/reservation-view.js';
import { getCurrentEventData } from './current-event-data.js';
import type { DestinationSlots } from './destination-slots.js';
import { claimAttempt, hasAttemptOutcome, readDeliveryContext, recordDelivered, recordFailure, reopenDeliveries, type AttemptRecord, type ClaimedAttempt, type DeliveryContext } from './delivery-state.js';
import { disableFailingEndpoint } from './endpoint-health.js';
import { serialiseEnvelope } from './envelope.js';
import { postWebhook, type WebhookOutcome } from './post-webhook.js';
import { getOrganisationSecretState, openSigningSecrets, secretStateOf } from './signing-secrets.js';
import { getMainEndpoint } from './webhook-endpoint-service.js';

/**
 * A failed attempt is the partner's doing, not a fault of this code: its error is one line, and its
 * stack is that line too (Error.stack is writable), so that Bull Board shows no stack trace for it.
 * An exception of our own code keeps its stack.
 */
function oneLine<E extends Error>(err: E): E {
  err.stack = err.message;
  return err;
}

/** A failed attempt that names its number, read by the custom backoff strategy. */
class AttemptFailed extends Error {
  constructor(
    readonly attempt: number,
    message: string,
  ) {
    super(message);
    oneLine(this);
  }
}

/** `2026-11-24T20:01:00Z`: to the second, as people read it in a job's error. */
const toSecond = (at: Date) => at.toISOString().replace(/\.\d{3}Z$/, 'Z');

type Destination = { endpointId: string | null; url: string | null } & ({ secrets: string[]; scheme: SignatureScheme } | { error: string });

/** Where this attempt goes and which secrets sign it; an unusable destination is a failed attempt. */
async function resolveDestination({ delivery, endpoint: pinned, organisationSecret }: DeliveryContext): Promise<Destination> {
  if (delivery.destination === 'url') {
    const state = organisationSecret ? secretStateOf(organisationSecret) : await getOrganisationSecretState(delivery.organisationId);
    return { endpointId: null, url: delivery.url, secrets: openSigningSecrets(state), scheme: 'service-v1' };
  }
  // The venue's main destination is pinned at its first use: a redelivery goes to the same one.
  const endpoint = delivery.endpointId ? pinned : await getMainEndpoint(delivery.venueId);
  if (!endpoint || endpoint.organisationId !== delivery.organisationId) {
    const error = delivery.endpointId ? `webhook endpoint ${delivery.endpointId} no longer exists` : 'the venue has no webhook endpoint';
    return { endpointId: delivery.endpointId, url: delivery.url, error };
  }
  if (!endpoint.isActive) return { endpointId: endpoint.id, url: endpoint.url, error: `webhook endpoint ${endpoint.id} is inactive` };
  return { endpointId: endpoint.id, url: endpoint.url, secrets: openSigningSecrets(secretStateOf(endpoint)), scheme: endpoint.signatureScheme };
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
 * sooner. The job remembers its destination so that its next run looks at the slots first.
 */
async function postpone(slots: DestinationSlots, data: WebhookDeliveryJob, job: Job, token: string | undefined, destination: string): Promise<never> {
  const postponed = data.postponed ?? 0;
  // Started while the slots look up the job's place; awaited before the move (a failure is thrown there).
  const updated = Promise.all([
    job.updateData({ ...data, destination, postponed: postponed + 1 }),
    // Back from the delayed set, it runs behind the jobs in line (src/queues/fair-share.ts): with a
    // fair tag, taken now or at enqueue, a saturated partner's backlog would come back ahead of
    // every job tagged while it waited, again and again.
    job.changePriority({ priority: behindTheLine }),
  ]);
  updated.catch(() => {});
  await slots.postpone(destination, job.id!, postponed, async (delayMs) => {
    await updated;
    await job.moveToDelayed(Date.now() + delayMs, token);
  });
  throw new DelayedError();
}

/**
 * A delivery of a recovery sent in order whose predecessor has no outcome yet: it waits in the
 * delayed set without consuming an attempt, until the predecessor's job wakes it (or the doubling
 * wait of postponementMs ends, should that wake-up be lost).
 */
async function waitForPredecessor(data: WebhookDeliveryJob, job: Job, token: string | undefined): Promise<never> {
  const postponed = data.postponed ?? 0;
  await job.updateData({ ...data, postponed: postponed + 1 });
  await job.moveToDelayed(Date.now() + postponementMs(postponed, Math.random()), token);
  throw new DelayedError();
}

/**
 * worker-webhooks: one attempt of one delivery. The row is the truth: it counts the attempts (also
 * those cut short by a crash), holds the body, and is updated before the job is retried or failed.
 */
export async function deliverWebhookJob(slots: DestinationSlots, data: WebhookDeliveryJob, job: Job, log: Logger, token: string | undefined): Promise<void> {
  const { deliveryId, destination: expected, after, next } = data;
  // The destination it went to last time, or was enqueued for: saturated, and no room to wait for a
  // slot here, the job is postponed before it reads the database.
  if (expected && (await slots.isSaturated(expected))) await postpone(slots, data, job, token, expected);
  const context = await readDeliveryContext(deliveryId);
  if (!context) return;
  // Not pending: delivered or annulled (nothing to do), or discarded after its last attempt and
  // retried from Bull Board, which is a redelivery.
  if (context.delivery.status !== 'pending' && !(await reopenDeliveries([deliveryId], 'exhausted')).length) return;
  if (after && context.delivery.attempts === 0 && !(await hasAttemptOutcome(after))) await waitForPredecessor(data, job, token);

  const destination = await resolveDestination(context);
  const origin = 'error' in destination ? null : destinationOf(destination.url ?? '');
  // An unusable destination fails at once and takes no slot.
  const slot = origin ? await slots.acquire(origin) : null;
  if (origin && !slot) await postpone(slots, data, job, token, origin);
  let claimed: ClaimedAttempt | undefined;
  let sent: WebhookOutcome;
  try {
    claimed = await claimAttempt(deliveryId, context.delivery.payload ?? (await buildBody(context)));
    if (!claimed) return; // concluded meanwhile (annulled, or by a duplicate of this job)
    const body = Buffer.from(claimed.payload, 'utf8');
    sent =
      'error' in destination
        ? { ok: false, status: null, error: destination.error, summary: destination.error, durationMs: 0, bodyExcerpt: null }
        : await postWebhook({ url: destination.url ?? '', headers: signedHeaders(destination.scheme, destination.secrets, context.delivery.idempotencyKey, body), body });
  } finally {
    if (slot) await slots.release(slot);
  }

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
    },
  };
  // One line per attempt in the job's log (Bull Board); the row is the truth, so a line Redis
  // refuses is not worth failing the attempt for.
  const logged = job.log(`attempt ${attempt} of ${maxDeliveryAttempts}: ${sent.summary}${'error' in destination ? '' : ` in ${sent.durationMs} ms`}`).catch(() => 0);
  // The next delivery of a recovery sent in order waits for this outcome (best effort: it also
  // comes back on its own).
  const wakeNext = () => {
    if (next && attempt === 1) void promoteDeliveryJob(next).catch(() => false);
  };
  if (sent.ok) {
    await Promise.all([recordDelivered(record), logged]);
    wakeNext();
    countWebhookDelivered(context.event.createdAt);
    return;
  }

  const delay = retryDelayMs(attempt, config.WEBHOOK_BACKOFF_SCALE);
  const nextAttemptAt = delay < 0 ? null : new Date(Date.now() + delay);
  const [recorded] = await Promise.all([recordFailure(record, nextAttemptAt), logged]);
  wakeNext();
  countWebhookFailure(delay < 0);
  const disabled = recorded.disableDue && reachedEndpointId ? await disableFailingEndpoint(reachedEndpointId, log) : false;
  if (!recorded.applied) return; // annulled while the request was under way
  if (!nextAttemptAt) throw oneLine(new UnrecoverableError(`${sent.summary} (attempt ${attempt} of ${maxDeliveryAttempts})`));
  // Disabling discarded this delivery and removed the other jobs of the destination; this one, which
  // cannot be removed while it runs, ends here and is removed on completion.
  if (disabled) return;
  if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) {
    throw new AttemptFailed(attempt, `${sent.summary} (attempt ${attempt} of ${maxDeliveryAttempts}, next at ${toSecond(nextAttemptAt)})`);
  }
  // BullMQ has no attempts left for this job (a Bull Board retry keeps its count): schedule it ourselves.
  await job.moveToDelayed(nextAttemptAt.getTime(), token);
  throw new DelayedError();
}
