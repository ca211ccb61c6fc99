import { z } from 'zod';
import { deliveryStatuses } from '../db/schema/index.js';
import { defineRoute } from '../http/define-route.js';
import { eventTypes } from '../lib/event-catalogue.js';
import { listQuerySchema } from '../services/pagination.js';
import { attemptJson, attemptSchema, deliveryJson, deliverySchema } from '../services/webhooks/delivery-json.js';
import { getVisibleDelivery, listAttempts, listDeliveries, redeliver } from '../services/webhooks/delivery-service.js';
import { keyed, pageOf } from '../core/response-schemas.js';

// A delivery is addressed by its record id or by its idempotency key (the envelope id).
const idParams = z.object({ id: z.union([z.uuid(), z.string().regex(/^automation:[0-9a-f-]{36}:\d{1,3}$/)]) });

const listQuery = listQuerySchema.extend({
  venueId: z.uuid().optional(),
  status: z.enum(deliveryStatuses).optional(),
  eventType: z.enum(eventTypes).optional(),
  automationId: z.uuid().optional(),
  endpointId: z.uuid().optional(),
});

export const webhookDeliveryRoutes = [
  defineRoute({
    method: 'get',
    path: '/webhook-deliveries',
    operationId: 'listWebhookDeliveries',
    responses: { 200: pageOf(deliverySchema) },
    tag: 'Webhooks',
    summary: 'List webhook deliveries and their outcome; status=discarded is the discard queue',
    description:
      'The envelope in `payload` is filtered by the key: without guests:read the guest data is reduced to its id; without reservations:read and events:read the reservation is null.',
    scope: 'webhooks:read',
    query: listQuery,
    handler: async ({ auth, query, services }) => {
      const page = await listDeliveries(auth, { ...query, cursorKey: services.cursorKey });
      return { body: { data: page.rows.map((d) => deliveryJson(d, auth)), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webhook-deliveries/:id',
    operationId: 'getWebhookDelivery',
    responses: { 200: keyed('delivery', deliverySchema) },
    tag: 'Webhooks',
    summary: 'Read a webhook delivery',
    scope: 'webhooks:read',
    params: idParams,
    handler: async ({ auth, params }) => ({ body: { delivery: deliveryJson(await getVisibleDelivery(auth, params.id), auth) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/webhook-deliveries/:id/attempts',
    operationId: 'listWebhookDeliveryAttempts',
    responses: { 200: pageOf(attemptSchema) },
    tag: 'Webhooks',
    summary: 'List the attempts of a webhook delivery, oldest first, across redeliveries',
    description:
      "`attempt` counts from 1 over the delivery's whole life. The log is kept as long as the delivery. Attempts never change: `changedAfter` selects those started after the instant.",
    scope: 'webhooks:read',
    params: idParams,
    query: listQuerySchema,
    handler: async ({ auth, params, query, services }) => {
      const page = await listAttempts(auth, params.id, { ...query, cursorKey: services.cursorKey });
      return { body: { data: page.rows.map(attemptJson), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-deliveries/:id/redeliver',
    operationId: 'redeliverWebhookDelivery',
    responses: { 202: keyed('delivery', deliverySchema) },
    errors: ['conflict'],
    tag: 'Webhooks',
    summary: 'Send a concluded delivery again: a fresh cycle of five attempts, same idempotency key, body and destination',
    description: '409 `conflict` while the delivery is pending.',
    scope: 'webhooks:write',
    params: idParams,
    successStatus: 202,
    handler: async ({ auth, params, log, services }) => ({
      body: { delivery: deliveryJson(await redeliver(auth, params.id, services.deliveryQueue, log), auth) },
    }),
  }),
];
