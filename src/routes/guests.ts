import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { parseGuestSearch, searchLimits } from '../lib/guest-search.js';
import { guestContactFields, guestFieldsSchema } from '../services/guests/guest-input.js';
import { guestJson } from '../services/guests/guest-json.js';
import {
  createGuest,
  getVisibleGuest,
  listGuests,
  lookupGuest,
  restoreGuest,
  trashGuest,
  updateGuest,
} from '../services/guests/guest-service.js';
import { listQuerySchema } from '../services/pagination.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { exampleCreateGuest, exampleGuest } from '../http/openapi-examples.js';
import { guestSchema } from '../services/guests/guest-json.js';

const idParams = z.object({ id: z.uuid() });
const guestLookupAnswer = z.union([
  z.object({ found: z.literal(true), guest: guestSchema }),
  z.object({ found: z.literal(false), phone: z.string().describe('The number as normalised (E.164).') }),
]);

const searchText = z.string().transform((text, ctx) => {
  const words = parseGuestSearch(text);
  if (!words) {
    ctx.addIssue({
      code: 'custom',
      message: `must be ${searchLimits.minLength} to ${searchLimits.maxLength} characters and at most ${searchLimits.maxWords} words`,
    });
    return z.NEVER;
  }
  return words;
});

const listGuestsQuery = listQuerySchema.extend({
  venueId: z.uuid().optional(),
  search: searchText.optional(),
  phone: z.string().max(40).optional(),
  email: z.string().max(254).optional(),
  externalRef: z.string().max(200).optional(),
});

const createGuestBody = guestFieldsSchema.partial().extend({ venueId: z.uuid(), phone: guestContactFields.phone });

export const guestRoutes = [
  defineRoute({
    method: 'get',
    path: '/guests',
    operationId: 'listGuests',
    responses: { 200: pageOf(guestSchema) },
    tag: 'Guests',
    summary: 'List guests',
    description:
      'Filters: venueId, search (name, e-mail or phone digits; 3 to 200 characters, at most 8 words, every word must match, case and accents ignored), ' +
      'phone (any written form; read with the country of venueId, or of each visible venue without it), email (case-insensitive), externalRef. ' +
      'Ordered by createdAt; with changedAfter by updatedAt, trashed guests included (deletedAt set) unless search is given.',
    scope: 'guests:read',
    query: listGuestsQuery,
    handler: async ({ auth, query, services }) => {
      const page = await listGuests(auth, { ...query, cursorKey: services.cursorKey });
      return { body: { data: page.rows.map(guestJson), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/guests',
    operationId: 'createGuest',
    responses: { 201: keyed('guest', guestSchema) },
    errors: ['conflict'],
    examples: { request: exampleCreateGuest, response: { guest: exampleGuest, livemode: true } },
    tag: 'Guests',
    summary: 'Create a guest',
    description:
      'The phone is normalised to E.164 with the venue country; a second live guest with the same phone in the venue is a 409 conflict.',
    scope: 'guests:write',
    body: createGuestBody,
    successStatus: 201,
    handler: async ({ auth, body, log }) => ({ body: { guest: guestJson(await createGuest(auth, body, log)) } }),
  }),
  // Before /guests/:id, which would otherwise take "lookup" for a (malformed) id.
  defineRoute({
    method: 'get',
    path: '/guests/lookup',
    operationId: 'lookupGuest',
    responses: { 200: guestLookupAnswer },
    tag: 'Guests',
    summary: 'Find the guest of a venue by phone',
    description: 'Answers {found: true, guest} or {found: false, phone} with the normalised phone. Trashed guests are not found.',
    scope: 'guests:read',
    query: z.object({ venueId: z.uuid(), phone: z.string().max(40) }),
    handler: async ({ auth, query }) => {
      const result = await lookupGuest(auth, query.venueId, query.phone);
      return { body: result.found ? { found: true, guest: guestJson(result.guest) } : result };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/guests/:id',
    operationId: 'getGuest',
    responses: { 200: keyed('guest', guestSchema) },
    tag: 'Guests',
    summary: 'Read a guest',
    description: 'A guest in the trash is still readable, with deletedAt set, until it is purged.',
    scope: 'guests:read',
    params: idParams,
    handler: async ({ auth, params }) => ({ body: { guest: guestJson(await getVisibleGuest(auth, params.id)) } }),
  }),
  defineRoute({
    method: 'patch',
    path: '/guests/:id',
    operationId: 'updateGuest',
    responses: { 200: keyed('guest', guestSchema) },
    errors: ['conflict'],
    tag: 'Guests',
    summary: 'Change a guest',
    description:
      'Emits guest_profile_changed: reason profile_changed when a field other than serviceTags changed, service_tags_changed when serviceTags changed ' +
      '(both events, in that order, when both changed). consents is merged key by key.',
    scope: 'guests:write',
    params: idParams,
    body: guestFieldsSchema.partial(),
    handler: async ({ auth, params, body, log }) => ({ body: { guest: guestJson(await updateGuest(auth, params.id, body, log)) } }),
  }),
  defineRoute({
    method: 'delete',
    path: '/guests/:id',
    operationId: 'deleteGuest',
    responses: { 204: null },
    tag: 'Guests',
    summary: 'Move a guest to the trash',
    description: 'The guest is hidden from lists, search and lookup, can be restored for 30 days, then is deleted permanently.',
    scope: 'guests:write',
    params: idParams,
    successStatus: 204,
    handler: async ({ auth, params }) => {
      await trashGuest(auth, params.id);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/guests/:id/restore',
    operationId: 'restoreGuest',
    responses: { 200: keyed('guest', guestSchema) },
    errors: ['conflict'],
    tag: 'Guests',
    summary: 'Take a guest out of the trash',
    description: 'Within 30 days of the deletion. 409 conflict when another live guest of the venue now has its phone or externalRef.',
    scope: 'guests:write',
    params: idParams,
    handler: async ({ auth, params }) => ({ body: { guest: guestJson(await restoreGuest(auth, params.id)) } }),
  }),
];
