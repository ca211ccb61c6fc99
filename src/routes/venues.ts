import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { listQuerySchema } from '../services/pagination.js';
import { venueJson } from '../services/venues/venue-json.js';
import { createVenue, getVisibleVenue, listVenues, updateVenue } from '../services/venues/venue-service.js';
import { isKnownCountry, isValidTimeZone } from '../lib/zones.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { venueSchema } from '../services/venues/venue-json.js';
import { tableOptimisationValues } from '../db/schema/index.js';

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
};

const createVenueBody = z.object({
  ...venueFields,
  slotIntervalMinutes: venueFields.slotIntervalMinutes.optional(),
  bookingHorizonDays: venueFields.bookingHorizonDays.optional(),
  minNoticeMinutes: venueFields.minNoticeMinutes.optional(),
  lateToleranceMinutes: venueFields.lateToleranceMinutes.optional(),
  noShowToleranceMinutes: venueFields.noShowToleranceMinutes.optional(),
  tableOptimisation: venueFields.tableOptimisation.optional(),
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
];
