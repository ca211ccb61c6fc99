import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { ApiError } from '../http/errors.js';
import { instantParam } from '../http/validation.js';
import { eventJson, listEvents } from '../services/events/event-service.js';
import { eventTypes } from '../lib/event-catalogue.js';
import { listQuerySchema } from '../services/pagination.js';
import { pageOf } from '../http/response-schemas.js';
import { eventSchema } from '../services/events/event-service.js';

const listEventsQuery = listQuerySchema.extend({
  venueId: z.uuid().optional(),
  type: z.enum(eventTypes).optional(),
  from: instantParam.optional(),
  to: instantParam.optional(),
});

export const eventRoutes = [
  defineRoute({
    method: 'get',
    path: '/events',
    operationId: 'listEvents',
    responses: { 200: pageOf(eventSchema) },
    tag: 'Events',
    summary: 'List events (the history), with their data as of the event time',
    description: '`from` and `to` are instants, both included. Event ids equal the `eventId` of webhook envelopes.',
    scope: 'events:read',
    query: listEventsQuery,
    handler: async ({ auth, query }) => {
      if (query.from && query.to && query.from > query.to) throw ApiError.invalid(['from', 'to'], '`from` must not be after `to`.');
      const page = await listEvents(auth, query);
      return { body: { data: page.rows.map(eventJson), nextCursor: page.nextCursor } };
    },
  }),
];
