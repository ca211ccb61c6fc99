import { z } from 'zod';

/** Job payloads are validated when consumed: a job written by an older release must not crash a worker. */
// The ids besides the job's own are for operators searching Bull Board (jobs of older releases lack them).
export const webhookDeliveryJobSchema = z.object({
  deliveryId: z.uuid(),
  // The destination the delivery was enqueued for (a hint, see enqueueDeliveries), or where it was
  // postponed because that destination was saturated: the next run looks at the destination's slots
  // before reading the database.
  destination: z.string().optional(),
  postponed: z.number().int().min(0).optional(),
  organisationId: z.uuid().optional(),
  venueId: z.uuid().optional(),
  eventId: z.uuid().optional(),
  endpointId: z.uuid().nullable().optional(),
  automationId: z.uuid().optional(),
  // A recovery sent in event order (docs/webhooks.md "Recovery"): the first attempt waits for the
  // outcome of the `after` delivery's, and wakes the `next` one once its own outcome is known.
  after: z.uuid().optional(),
  next: z.uuid().optional(),
});

export type WebhookDeliveryJob = z.infer<typeof webhookDeliveryJobSchema>;
