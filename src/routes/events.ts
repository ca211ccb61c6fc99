import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { ApiError } from '../core/errors.js';
import { instantParam } from '../core/validation.js';
import { eventJson, listEvents, payloadReaderOf } from '../services/events/event-service.js';
import { eventTypes } from '../lib/event-catalogue.js';
import { listQuerySchema } from '../services/pagination.js';
import { pageOf } from '../core/response-schemas.js';
import { eventSchema } from '../services/events/event-service.js';

const listEventsQuery = listQuerySchema.extend({
  venueId: z.uuid().optional(),
  type: z.enum(eventTypes).optional(),
  from: instantParam.optional(),
  to: instantParam.optional(),
});

/** `venueId=a&venueId=b`: any value that is not an id is a 400 naming `venueId`. */
const venueIdList = z.union([z.string(), z.array(z.string())]).transform((value, ctx) => {
  const list = Array.isArray(value) ? value : [value];
  if (list.some((id) => !z.uuid().safeParse(id).success)) {
    ctx.addIssue({ code: 'custom', message: 'must be venue ids' });
    return z.NEVER;
  }
  return list;
});

/** The event a stream resumes after: `Last-Event-ID` (what EventSource sends on reconnecting), else `?after`. */
function resumeAfter(header: string | undefined, after: string | undefined) {
  if (header === undefined || header === '') return after === undefined ? undefined : { id: after, field: 'after' };
  if (!z.uuid().safeParse(header).success) throw ApiError.invalid(['Last-Event-ID'], 'Last-Event-ID must be an event id.');
  return { id: header, field: 'Last-Event-ID' };
}

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
    handler: async ({ auth, query, services }) => {
      if (query.from && query.to && query.from > query.to) throw ApiError.invalid(['from', 'to'], '`from` must not be after `to`.');
      const page = await listEvents(auth, { ...query, cursorKey: services.cursorKey });
      const reader = payloadReaderOf(auth);
      return { body: { data: page.rows.map((e) => eventJson(e, reader)), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/events/stream',
    tag: 'Events',
    summary: 'Live events as Server-Sent Events, in commit order, resumable',
    description:
      'text/event-stream: each event of GET /events as `id: <eventId>`, `event: <type>`, `data: <the GET /events item as JSON>`, in commit order, ' +
      'within about a second of its commit whatever web instance serves the stream. `venueId` (optional, repeatable) narrows it to those venues; a key ' +
      'limited to certain venues sees only theirs. `Last-Event-ID` (sent by EventSource on reconnecting) or `?after=<eventId>` resumes after that event ' +
      'with nothing missed; without either the stream starts from now. A `: keep-alive` comment every 15 s. A client that reads too slowly is ' +
      'disconnected and resumes with Last-Event-ID.',
    scope: 'events:read',
    query: z.object({ venueId: venueIdList.optional(), after: z.uuid().optional() }),
    raw: true,
    operationId: 'streamEvents',
    responses: {
      200: {
        description: 'The events, as Server-Sent Events, until the client or the server ends the stream',
        content: {
          'text/event-stream': {
            schema: {
              type: 'string',
              description: 'Frames `id: <eventId>`, `event: <type>`, `data: <an Event as JSON>`; comment lines `: keep-alive`.',
            },
            example:
              'retry: 1000\n\nid: 5b0c…\nevent: reservation_created\ndata: {"id":"5b0c…","type":"reservation_created",…}\n\n: keep-alive\n\n',
          },
        },
      },
    },
    handler: async ({ auth, query, req, res, services }) => {
      const after = resumeAfter(req.get('last-event-id'), query.after);
      await services.eventStreams.open(auth, { venueIds: query.venueId ?? [], after }, res);
    },
  }),
];
