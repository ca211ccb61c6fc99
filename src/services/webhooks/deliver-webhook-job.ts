import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { eq } from 'drizzle-orm';
import { config } from '../../config.js';
import { db } from '../../db/client.js';
import { automations, events, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import { maxDeliveryAttempts, retryDelayMs } from '../../lib/webhook-backoff.js';
import { webhookDeliveryJobSchema } from '../../queues/job-payloads.js';
import { getCurrentEventData } from './current-event-data.js';
import type { DeliveryRow } from './delivery-json.js';
import { claimAttempt, recordDelivered, recordFailure, reopenDelivery } from './delivery-state.js';
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
async function resolveDestination(delivery: DeliveryRow): Promise<Destination> {
  if (delivery.destination === 'url') {
    return { endpointId: null, url: delivery.url, secrets: openSigningSecrets(await getOrganisationSecretState(delivery.organisationId)) };
  }
  const endpoint = delivery.endpointId
    ? (await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, delivery.endpointId)))[0]
    : await getMainEndpoint(delivery.venueId);
  if (!endpoint || endpoint.organisationId !== delivery.organisationId) {
    const error = delivery.endpointId ? `webhook endpoint ${delivery.endpointId} no longer exists` : 'the venue has no webhook endpoint';
    return { endpointId: delivery.endpointId, url: delivery.url, error };
  }
  if (!endpoint.isActive) return { endpointId: endpoint.id, url: endpoint.url, error: `webhook endpoint ${endpoint.id} is inactive` };
  return { endpointId: endpoint.id, url: endpoint.url, secrets: openSigningSecrets(secretStateOf(endpoint)) };
}

async function loadDelivery(id: string) {
  const [row] = await db
    .select({ delivery: webhookDeliveries, event: events, automationName: automations.name })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .innerJoin(automations, eq(automations.id, webhookDeliveries.automationId))
    .where(eq(webhookDeliveries.id, id));
  return row;
}

/**
 * worker-webhooks: one attempt of one delivery. The row is the truth: it counts the attempts (also
 * those cut short by a crash), holds the body built at the first attempt, and is updated before the
 * job is retried or failed.
 */
export async function deliverWebhookJob(job: Job, token?: string): Promise<void> {
  const { deliveryId } = webhookDeliveryJobSchema.parse(job.data);
  const loaded = await loadDelivery(deliveryId);
  if (!loaded) return;
  let delivery = loaded.delivery;
  if (delivery.status === 'delivered') return;
  if (delivery.status === 'discarded') {
    // A discarded job retried from Bull Board is a redelivery; an annulled delivery stays annulled.
    const reopened = await reopenDelivery(delivery.id, true);
    if (!reopened) return;
    delivery = reopened;
  }

  const destination = await resolveDestination(delivery);
  const { event } = loaded;
  // The body is built once, from the subject's state at the first attempt, and then kept byte for byte.
  const payload =
    delivery.payload ??
    serialiseEnvelope({
      idempotencyKey: delivery.idempotencyKey,
      eventId: event.id,
      type: event.type,
      createdAt: event.createdAt,
      venueId: event.venueId,
      data: await getCurrentEventData(event),
      automation: { name: loaded.automationName, runId: delivery.runId },
    });
  const claimed = await claimAttempt(delivery, { payload, endpointId: destination.endpointId, url: destination.url });
  if (!claimed?.payload) return;

  const body = Buffer.from(claimed.payload, 'utf8');
  const outcome =
    'error' in destination
      ? { ok: false, status: null, error: destination.error }
      : await postWebhook({ url: destination.url ?? '', headers: signedHeaders(destination.secrets, claimed.idempotencyKey, body), body });
  if (outcome.ok && outcome.status !== null) {
    await recordDelivered(claimed.id, outcome.status);
    return;
  }

  const attempt = claimed.attempts;
  const error = outcome.error ?? 'failed';
  const delay = retryDelayMs(attempt, config.WEBHOOK_BACKOFF_SCALE);
  const stillPending = await recordFailure(claimed.id, { status: outcome.status, error }, delay < 0 ? null : new Date(Date.now() + delay));
  if (!stillPending) return; // annulled while the request was under way
  if (delay < 0) throw new UnrecoverableError(`${error} (attempt ${attempt} of ${maxDeliveryAttempts}: discarded)`);
  if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw new AttemptFailed(attempt, error);
  // BullMQ has no attempts left for this job (a Bull Board retry keeps its count): schedule it ourselves.
  await job.moveToDelayed(Date.now() + delay, token);
  throw new DelayedError();
}
