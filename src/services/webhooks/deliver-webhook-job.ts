import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { config } from '../../config.js';
import { maxDeliveryAttempts, retryDelayMs } from '../../lib/webhook-backoff.js';
import { countWebhookDelivered, countWebhookFailure } from '../../metrics/metrics.js';
import { destinationOf } from '../../lib/webhook-destination.js';
import { webhookDeliveryJobSchema } from '../../queues/job-payloads.js';
import { reservationViewOf } from '../reservations/reservation-view.js';
import { getCurrentEventData } from './current-event-data.js';
import { acquireDestinationSlot, addDestinationWaiter, destinationHasFreeSlot, destinationPostponementMs, destinationWaitersAhead, mayWaitForSlotHere } from './destination-slots.js';
import { claimAttempt, readDeliveryContext, recordDelivered, recordFailure, reopenDelivery, type DeliveryContext } from './delivery-state.js';
import { serialiseEnvelope, signedHeaders } from './envelope.js';
import { postWebhook } from './post-webhook.js';
import { getOrganisationSecretState, openSigningSecrets, secretStateOf } from './signing-secrets.js';
import { getMainEndpoint } from './webhook-endpoint-service.js';

/** A failed attempt that names its number, read by the custom backoff strategy. */
class AttemptFailed extends Error {
  constructor(
    readonly attempt: number,
    message: string,
  ) {
    super(message);
  }
}

type Destination = { endpointId: string | null; url: string | null } & ({ secrets: string[] } | { error: string });

/** Where this attempt goes and which secrets sign it; an unusable destination is a failed attempt. */
async function resolveDestination({ delivery, endpoint: pinned, organisationSecret }: DeliveryContext): Promise<Destination> {
  if (delivery.destination === 'url') {
    const state = organisationSecret ? secretStateOf(organisationSecret) : await getOrganisationSecretState(delivery.organisationId);
    return { endpointId: null, url: delivery.url, secrets: openSigningSecrets(state) };
  }
  // The venue's main destination is pinned at its first use: a redelivery goes to the same one.
  const endpoint = delivery.endpointId ? pinned : await getMainEndpoint(delivery.venueId);
  if (!endpoint || endpoint.organisationId !== delivery.organisationId) {
    const error = delivery.endpointId ? `webhook endpoint ${delivery.endpointId} no longer exists` : 'the venue has no webhook endpoint';
    return { endpointId: delivery.endpointId, url: delivery.url, error };
  }
  if (!endpoint.isActive) return { endpointId: endpoint.id, url: endpoint.url, error: `webhook endpoint ${endpoint.id} is inactive` };
  return { endpointId: endpoint.id, url: endpoint.url, secrets: openSigningSecrets(secretStateOf(endpoint)) };
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
 * waiting for that destination (destinationPostponementMs); the release of a slot wakes the oldest
 * sooner. The job remembers its destination so that its next run looks at the slots first.
 */
async function postpone(job: Job, token: string | undefined, destination: string): Promise<never> {
  const data = webhookDeliveryJobSchema.parse(job.data);
  const postponed = data.postponed ?? 0;
  const [ahead] = await Promise.all([destinationWaitersAhead(destination, job.id!), job.updateData({ ...data, destination, postponed: postponed + 1 })]);
  await job.moveToDelayed(Date.now() + destinationPostponementMs(destination, ahead, postponed), token);
  await addDestinationWaiter(destination, job.id!);
  throw new DelayedError();
}

/**
 * worker-webhooks: one attempt of one delivery. The row is the truth: it counts the attempts (also
 * those cut short by a crash), holds the body, and is updated before the job is retried or failed.
 */
export async function deliverWebhookJob(job: Job, token?: string): Promise<void> {
  const { deliveryId, destination: expected } = webhookDeliveryJobSchema.parse(job.data);
  // The destination it went to last time, or was enqueued for: saturated, and no room to wait for a
  // slot here, the job is postponed before it reads the database.
  if (expected && !mayWaitForSlotHere(expected) && !(await destinationHasFreeSlot(expected))) await postpone(job, token, expected);
  const context = await readDeliveryContext(deliveryId);
  if (!context) return;
  // Not pending: delivered or annulled (nothing to do), or discarded after its last attempt and
  // retried from Bull Board, which is a redelivery.
  if (context.delivery.status !== 'pending' && !(await reopenDelivery(deliveryId, true))) return;

  const destination = await resolveDestination(context);
  const origin = 'error' in destination ? null : destinationOf(destination.url ?? '');
  // An unusable destination fails at once and takes no slot.
  const slot = origin ? await acquireDestinationSlot(origin) : null;
  if (origin && !slot) await postpone(job, token, origin);
  let claimed: Awaited<ReturnType<typeof claimAttempt>>;
  let sent: { ok: boolean; status: number | null; error: string | null };
  try {
    claimed = await claimAttempt(deliveryId, context.delivery.payload ?? (await buildBody(context)));
    if (!claimed) return; // concluded meanwhile (annulled, or by a duplicate of this job)
    const body = Buffer.from(claimed.payload, 'utf8');
    sent =
      'error' in destination
        ? { ok: false, status: null, error: destination.error }
        : await postWebhook({ url: destination.url ?? '', headers: signedHeaders(destination.secrets, context.delivery.idempotencyKey, body), body });
  } finally {
    await slot?.release();
  }
  const outcome = { status: sent.status, error: sent.error, endpointId: destination.endpointId, url: destination.url };
  if (sent.ok) {
    await recordDelivered(deliveryId, outcome);
    countWebhookDelivered(context.event.createdAt);
    return;
  }

  const attempt = claimed.attempts;
  const delay = retryDelayMs(attempt, config.WEBHOOK_BACKOFF_SCALE);
  const stillPending = await recordFailure(deliveryId, outcome, delay < 0 ? null : new Date(Date.now() + delay));
  countWebhookFailure(delay < 0);
  if (!stillPending) return; // annulled while the request was under way
  const error = sent.error ?? 'failed';
  if (delay < 0) throw new UnrecoverableError(`${error} (attempt ${attempt} of ${maxDeliveryAttempts}: discarded)`);
  if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw new AttemptFailed(attempt, error);
  // BullMQ has no attempts left for this job (a Bull Board retry keeps its count): schedule it ourselves.
  await job.moveToDelayed(Date.now() + delay, token);
  throw new DelayedError();
}
