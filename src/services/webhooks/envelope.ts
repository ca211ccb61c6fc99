import { z } from 'zod';
import { instant, uuid } from '../../core/response-schemas.js';

/** The envelope of one event type, `data` being that type's data. */
export function envelopeSchemaFor<T extends z.ZodType>(types: readonly [string, ...string[]], data: T) {
  return z.object({
    id: z
      .string()
      .describe('The delivery id: `automation:<runId>:<n>` (`test:<uuid>` for webhook_test); equals X-Service-Idempotency-Key.'),
    eventId: uuid.nullable().describe('The id of the event in GET /events (null for webhook_test).'),
    type: z.enum(types),
    createdAt: instant,
    venueId: uuid,
    apiVersion: z.literal('v1'),
    data,
    automation: z
      .object({ name: z.string(), runId: uuid })
      .nullable()
      .describe('The automation and run that sent it (null for webhook_test).'),
  });
}

/** The envelope of docs/webhooks.md, serialised once: these bytes are signed and sent at every attempt. */
export function serialiseEnvelope(input: {
  idempotencyKey: string;
  eventId: string | null;
  type: string;
  createdAt: Date;
  venueId: string;
  data: Record<string, unknown>;
  automation: { name: string; runId: string } | null;
}): string {
  return JSON.stringify({
    id: input.idempotencyKey,
    eventId: input.eventId,
    type: input.type,
    createdAt: input.createdAt.toISOString(),
    venueId: input.venueId,
    apiVersion: 'v1',
    data: input.data,
    automation: input.automation,
  });
}

/** `automation:<runId>:<n>`: the delivery's idempotency key, n being the index of the action. */
export function deliveryKey(runId: string, actionIndex: number): string {
  return `automation:${runId}:${actionIndex}`;
}
