import { z } from 'zod';
import { waitlistStatusValues } from '../db/schema/index.js';
import { defineRoute } from '../http/define-route.js';
import { hhmm, isoDate, optionalText } from '../core/validation.js';
import { listQuerySchema } from '../services/pagination.js';
import { guestVisibilityOf, reservationJson } from '../services/reservations/reservation-json.js';
import { waitlistEntryJson } from '../services/waitlist/waitlist-json.js';
import {
  cancelWaitlistEntry,
  convertWaitlistEntry,
  createWaitlistEntry,
  getVisibleEntry,
  listWaitlistEntries,
  notifyWaitlistEntry,
  showsGuestData,
  updateWaitlistEntry,
} from '../services/waitlist/waitlist-service.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { reservationSchema } from '../services/reservations/reservation-json.js';
import { waitlistEntrySchema } from '../services/waitlist/waitlist-json.js';
import { quoteWaits, waitQuotesSchema } from '../services/waitlist/wait-quotes.js';
import { exampleWaitQuotes } from '../http/openapi-examples.js';

const idParams = z.object({ id: z.uuid() });
const entryAnswer = keyed('entry', waitlistEntrySchema);

const entryFields = {
  partySize: z.number().int().min(1).max(500),
  name: optionalText(200),
  phone: z.string().max(40),
  notes: optionalText(2000),
  quotedWaitMinutes: z.number().int().min(0).max(1440).nullable(),
};

const createEntryBody = z.object({
  venueId: z.uuid(),
  serviceDate: isoDate.optional(),
  partySize: entryFields.partySize,
  name: entryFields.name.optional(),
  phone: entryFields.phone.optional(),
  guestId: z.uuid().optional(),
  notes: entryFields.notes.optional(),
  quotedWaitMinutes: entryFields.quotedWaitMinutes.optional(),
});

const listWaitlistQuery = listQuerySchema.extend({
  venueId: z.uuid().optional(),
  serviceDate: isoDate.optional(),
  status: z.enum(waitlistStatusValues).optional(),
});

/** docs/reservations.md "Turn times and wait quotes": up to 8 party sizes per question. */
const maxQuoteSizes = 8;

const quoteQuery = z.object({
  venueId: z.uuid(),
  // A repeated parameter arrives as an array, a single one as a string.
  partySize: z
    .union([z.coerce.number().int().min(1).max(500), z.array(z.coerce.number().int().min(1).max(500)).min(1).max(maxQuoteSizes)])
    .transform((v) => (Array.isArray(v) ? v : [v])),
});

export const waitlistRoutes = [
  defineRoute({
    method: 'get',
    path: '/waitlist/quote',
    operationId: 'quoteWaits',
    responses: { 200: waitQuotesSchema },
    tag: 'Waiting list',
    summary: 'Estimate the wait of a party joining the waiting list now',
    description:
      `One quote per \`partySize\` (repeat it, up to ${maxQuoteSizes} sizes), each as if that party joined the queue now: the parties ahead and ` +
      "the expected seat time as a range (UTC; 20 minutes or a third of the wait wide, whichever is larger), from the seated parties' " +
      'expected ends, the reservations due and the entries ahead, with the turn times the venue uses. Past the last seating of the ' +
      'service: `estimatedSeatTime: null`, `reason: "after_last_seating"`.',
    scope: 'reservations:read',
    widget: true,
    query: quoteQuery,
    examples: { response: exampleWaitQuotes },
    handler: async ({ auth, query }) => ({ body: await quoteWaits(auth, query.venueId, query.partySize) }),
  }),
  defineRoute({
    method: 'post',
    path: '/waitlist',
    operationId: 'createWaitlistEntry',
    responses: { 201: entryAnswer },
    tag: 'Waiting list',
    summary: 'Add a party to the waiting list',
    description:
      'The party joins the end of the queue of its serviceDate (default: today in the venue). A phone finds or creates the guest of the venue, ' +
      'as for reservations; `guestId` names an existing one. Emits waitlist_entry_created. `name` and `phone` are shown only with guests:read.',
    scope: 'reservations:write',
    body: createEntryBody,
    successStatus: 201,
    handler: async ({ auth, body, log }) => ({
      body: { entry: waitlistEntryJson(await createWaitlistEntry(auth, body, log), showsGuestData(auth)) },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/waitlist',
    operationId: 'listWaitlistEntries',
    responses: { 200: pageOf(waitlistEntrySchema) },
    tag: 'Waiting list',
    summary: 'List waiting-list entries in queue order',
    description: 'Ordered by serviceDate, then position (the queue order); filters venueId, serviceDate, status.',
    scope: 'reservations:read',
    query: listWaitlistQuery,
    handler: async ({ auth, query, services }) => {
      const page = await listWaitlistEntries(auth, { ...query, cursorKey: services.cursorKey });
      const show = showsGuestData(auth);
      return { body: { data: page.rows.map((e) => waitlistEntryJson(e, show)), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/waitlist/:id',
    operationId: 'getWaitlistEntry',
    responses: { 200: entryAnswer },
    tag: 'Waiting list',
    summary: 'Read a waiting-list entry',
    scope: 'reservations:read',
    params: idParams,
    handler: async ({ auth, params }) => ({
      body: { entry: waitlistEntryJson(await getVisibleEntry(auth, params.id), showsGuestData(auth)) },
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/waitlist/:id',
    operationId: 'updateWaitlistEntry',
    responses: { 200: entryAnswer },
    tag: 'Waiting list',
    summary: 'Change an entry still in the queue',
    description:
      'partySize, name, phone (finds or creates the guest), notes, quotedWaitMinutes. A converted, cancelled or expired entry: 400 invalid_transition.',
    scope: 'reservations:write',
    params: idParams,
    body: z.object(entryFields).partial(),
    handler: async ({ auth, params, body, log }) => ({
      body: { entry: waitlistEntryJson(await updateWaitlistEntry(auth, params.id, body, log), showsGuestData(auth)) },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/waitlist/:id/notify',
    operationId: 'notifyWaitlistEntry',
    responses: { 200: entryAnswer },
    tag: 'Waiting list',
    summary: 'Record a call-back to the party',
    description: 'The entry becomes notified with notifiedAt = now (a later call-back records its own time).',
    scope: 'reservations:write',
    params: idParams,
    handler: async ({ auth, params, log }) => ({
      body: { entry: waitlistEntryJson(await notifyWaitlistEntry(auth, params.id, log), showsGuestData(auth)) },
    }),
  }),
  defineRoute({
    method: 'post',
    path: '/waitlist/:id/convert',
    operationId: 'convertWaitlistEntry',
    responses: { 200: z.object({ entry: waitlistEntrySchema, reservation: reservationSchema }) },
    errors: ['no_availability', 'conflict'],
    tag: 'Waiting list',
    summary: 'Turn an entry into a reservation',
    description:
      "Books the party through the engine with source `waitlist`: at `time` on the entry's serviceDate, or, without a time, now (the party is at " +
      'the venue; only for an entry of today). `tableId` (needs floor:write) asks for a table. Unavailable: 409 no_availability as for ' +
      'POST /reservations, and the entry stays in the queue. Answers `{entry, reservation}` with the entry converted.',
    scope: 'reservations:write',
    params: idParams,
    body: z.object({ time: hhmm.optional(), tableId: z.uuid().optional() }),
    handler: async ({ auth, params, body, log }) => {
      const { entry, reservation } = await convertWaitlistEntry(auth, params.id, body, log);
      return {
        body: { entry: waitlistEntryJson(entry, showsGuestData(auth)), reservation: reservationJson(reservation, guestVisibilityOf(auth)) },
      };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/waitlist/:id',
    operationId: 'cancelWaitlistEntry',
    responses: { 200: entryAnswer },
    tag: 'Waiting list',
    summary: 'Remove a party from the waiting list',
    description: 'The entry becomes cancelled and waitlist_entry_cancelled is emitted; an entry already cancelled answers unchanged.',
    scope: 'reservations:write',
    params: idParams,
    handler: async ({ auth, params, log }) => ({
      body: { entry: waitlistEntryJson(await cancelWaitlistEntry(auth, params.id, log), showsGuestData(auth)) },
    }),
  }),
];
