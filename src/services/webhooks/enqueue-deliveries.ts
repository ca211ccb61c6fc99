import type { Config } from '../../config.js';
import { groupBy } from '../../lib/group-by.js';
import { destinationOf } from '../../lib/webhook-destination.js';
import { eventJob } from '../../jobs/event-job.js';
import { webhookDeliveryJob, type WebhookDeliveryJob } from '../../jobs/webhook-delivery-job.js';
import { runningJobSpan } from '../../tracing/tracing.js';
import { behindTheLine, takeFairPrioritiesOf } from '../../queues/fair-share.js';
import { addJobs, getQueue, getQueueConnection } from '../../queues/queues.js';
import { DestinationSlots } from './destination-slots.js';

// The producer's side of the webhook-delivery queue (the job definition, src/jobs/webhook-delivery-job.ts,
// knows no service): which jobs a set of delivery rows becomes, with their hold-back per destination
// and their place in the fair line.

/** The columns of a delivery row its job is made from. */
export interface DeliveryToEnqueue {
  id: string;
  organisationId: string;
  venueId: string;
  eventId: string;
  eventType: string;
  automationId: string;
  endpointId: string | null;
  /**
   * The address it is expected to go to, when known: the job takes a slot of that destination (its
   * normalised origin) before it reads the database, and is postponed when none frees up. Only a
   * hint: an attempt whose row resolves another destination takes its slot there.
   */
  url: string | null;
  /** When the first attempt is due (the action's delay); null or past: now. */
  nextAttemptAt: Date | null;
  /** Sent in order: the delivery whose first attempt this one's waits for, and the one it wakes. */
  after?: string;
  next?: string;
}

/**
 * What enqueueing deliveries reads of the process's configuration, handed down by the role or the app
 * that enqueues: the deployment's prefix (the destinations' lines live under it) and how many attempts
 * a destination takes at once.
 */
export type DeliveryQueueSettings = Pick<Config, 'QUEUE_PREFIX' | 'WEBHOOK_DESTINATION_CONCURRENCY'>;

/** docs/operations.md "Bull Board": `<event type> → <endpoint host>`, so that an operator sees what a job is about. */
export function deliveryJobName(d: Pick<DeliveryToEnqueue, 'eventType' | 'url'>): string {
  let host = "the venue's endpoint";
  try {
    if (d.url) host = new URL(d.url).host;
  } catch {
    // An address the attempt will refuse; the job is still named after its event.
  }
  return `${d.eventType} → ${host}`;
}

/**
 * jobId = delivery id, so enqueueing twice is harmless. Of the deliveries due now, only the first
 * few per destination are sent to the workers at once; the others are enqueued already postponed,
 * behind the destination's waiting jobs (DestinationSlots.holdBack): the release of a slot wakes them in
 * order, their delay (about their turn) is the fallback.
 */
export async function enqueueDeliveries(deliveries: DeliveryToEnqueue[], settings: DeliveryQueueSettings): Promise<void> {
  if (!deliveries.length) return;
  const now = Date.now();
  const dueIn = (d: DeliveryToEnqueue) => Math.max(0, (d.nextAttemptAt?.getTime() ?? now) - now);
  const destinationOfDelivery = new Map(deliveries.map((d) => [d.id, destinationOf(d.url ?? '')]));
  const dueNow = deliveries.filter((d) => destinationOfDelivery.get(d.id) && dueIn(d) === 0);
  const byDestination = new Map(
    [...groupBy(dueNow, (d) => destinationOfDelivery.get(d.id)!)].map(([destination, list]) => [destination, list.map((d) => d.id)]),
  );
  const heldBack = await DestinationSlots.holdBack(getQueueConnection(), byDestination, {
    prefix: settings.QUEUE_PREFIX,
    limit: settings.WEBHOOK_DESTINATION_CONCURRENCY,
  });
  // Only the jobs that go to the workers now take a place in the line; those enqueued delayed run
  // behind it when they come back (src/queues/fair-share.ts).
  const inLine = deliveries.filter((d) => !heldBack.delays.has(d.id) && dueIn(d) === 0);
  const tags = await takeFairPrioritiesOf(webhookDeliveryJob.queueName, inLine, (d) => d.organisationId);
  const priorities = new Map(inLine.map((d, i) => [d.id, tags[i]]));
  await addJobs(
    getQueue(webhookDeliveryJob.queueName),
    deliveries.map((d) => {
      const destination = destinationOfDelivery.get(d.id);
      const ids = {
        organisationId: d.organisationId,
        venueId: d.venueId,
        eventId: d.eventId,
        endpointId: d.endpointId,
        automationId: d.automationId,
      };
      return {
        name: deliveryJobName(d),
        // Fields left undefined are not written (JSON).
        data: {
          deliveryId: d.id,
          ...(destination ? { destination } : {}),
          ...ids,
          after: d.after,
          next: d.next,
          // Created by its event's job (an event job's id is the event's): the first attempt joins that
          // trace. A redelivery or a job the sweeper gives back starts a trace of its own.
          trace: runningJobSpan(eventJob.queueName, d.eventId),
        } satisfies WebhookDeliveryJob,
        opts: {
          ...webhookDeliveryJob.jobOptions,
          jobId: d.id,
          delay: heldBack.delays.get(d.id) ?? dueIn(d),
          priority: priorities.get(d.id) ?? behindTheLine,
        },
      };
    }),
  );
  await heldBack.enlist();
}
