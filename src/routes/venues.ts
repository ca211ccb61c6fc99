import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { listQuerySchema } from '../services/pagination.js';
import { venueJson } from '../services/venues/venue-json.js';
import { createVenue, getVisibleVenue, listVenues, updateVenue } from '../services/venues/venue-service.js';
import { isKnownCountry, isValidTimeZone } from '../lib/zones.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { venueSchema } from '../services/venues/venue-json.js';
import { tableOptimisationValues, turnTimeSourceValues } from '../db/schema/index.js';
import { getLearnedTurnTimes, learnedTurnTimesSchema } from '../services/turn-times/learned-turn-times.js';
import { exampleLearnedTurnTimes } from '../http/openapi-examples.js';

const idParams = z.object({ id: z.uuid() });

const venueFields = {
  name: z.string().trim().min(1).max(200),
  timezone: z.string().refine(isValidTimeZone, 'unknown IANA time zone'),
  countryCode: z.string().refine(isKnownCountry, 'unknown ISO 3166 alpha-2 country code'),
  slotIntervalMinutes: z.number().int().min(5).max(240),
  bookingHorizonDays: z.number().int().min(1).max(730),
  minNoticeMinutes: z.number().int().min(0).max(10080),
  lateToleranceMinutes: z.number().int().min(1).max(720),
  noShowToleranceMinutes: z.number().int().min(1).max(1440).nullable(),
  tableOptimisation: z.enum(tableOptimisationValues),
  turnTimeSource: z.enum(turnTimeSourceValues),
};

const createVenueBody = z.object({
  ...venueFields,
  slotIntervalMinutes: venueFields.slotIntervalMinutes.optional(),
  bookingHorizonDays: venueFields.bookingHorizonDays.optional(),
  minNoticeMinutes: venueFields.minNoticeMinutes.optional(),
  lateToleranceMinutes: venueFields.lateToleranceMinutes.optional(),
  noShowToleranceMinutes: venueFields.noShowToleranceMinutes.optional(),
  tableOptimisation: venueFields.tableOptimisation.optional(),
  turnTimeSource: venueFields.turnTimeSource.optional(),
});

export const venueRoutes = [
  defineRoute({
    method: 'get',
    path: '/venues',
    operationId: 'listVenues',
    responses: { 200: pageOf(venueSchema) },
    tag: 'Venues',
    summary: 'List the venues visible to the key',
    scope: 'venues:read',
    query: listQuerySchema,
    handler: async ({ auth, query, services }) => {
      const page = await listVenues(auth, { ...query, cursorKey: services.cursorKey });
      return { body: { data: page.rows.map(venueJson), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/venues',
    operationId: 'createVenue',
    responses: { 201: keyed('venue', venueSchema) },
    tag: 'Venues',
    summary: 'Create a venue in the organisation',
    scope: 'venues:write',
    organisationWide: true,
    body: createVenueBody,
    successStatus: 201,
    handler: async ({ auth, body }) => ({ body: { venue: venueJson(await createVenue(auth.organisationId, body)) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/venues/:id',
    operationId: 'getVenue',
    responses: { 200: keyed('venue', venueSchema) },
    tag: 'Venues',
    summary: 'Read a venue',
    scope: 'venues:read',
    params: idParams,
    handler: async ({ auth, params }) => ({ body: { venue: venueJson(await getVisibleVenue(auth, params.id)) } }),
  }),
  defineRoute({
    method: 'patch',
    path: '/venues/:id',
    operationId: 'updateVenue',
    responses: { 200: keyed('venue', venueSchema) },
    tag: 'Venues',
    summary: 'Change a venue',
    scope: 'venues:write',
    params: idParams,
    body: z.object(venueFields).partial(),
    handler: async ({ auth, params, body }) => ({ body: { venue: venueJson(await updateVenue(auth, params.id, body)) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/venues/:id/turn-times/learned',
    operationId: 'getLearnedTurnTimes',
    responses: { 200: learnedTurnTimesSchema },
    tag: 'Venues',
    summary: "The venue's learned turn times",
    description:
      'Per party-size band (1–2, 3–4, 5–6, 7+), active shift and ISO day of week: the completed reservations of the last 8 weeks ' +
      '(seatedAt → completedAt; an imported past row by its own length), their p50 and p80 in minutes. A cell with fewer than 12 ' +
      'samples borrows from the same band and shift on all days, then the band alone, then the configured rule (`borrowed`). ' +
      'Learned again within minutes of a completion and when the day changes. With `turnTimeSource: learned` the engine uses the p50, ' +
      'kept within 30..300 minutes.',
    scope: 'venues:read',
    params: idParams,
    examples: { response: exampleLearnedTurnTimes },
    handler: async ({ auth, params }) => ({ body: await getLearnedTurnTimes(auth, params.id) }),
  }),
];
