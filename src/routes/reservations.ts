import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { ApiError } from '../core/errors.js';
import { hhmm, instantParam, isAnswerableInstant, isoDate } from '../core/validation.js';
import { reservationStatuses, type ReservationStatus } from '../lib/availability/types.js';
import { guestContactSchema } from '../services/guests/guest-input.js';
import { listQuerySchema } from '../services/pagination.js';
import { cancelReservation, updateReservation } from '../services/reservations/change-reservation.js';
import { createReservation } from '../services/reservations/create-reservation.js';
import { exampleCreateReservation, exampleReservation } from '../http/openapi-examples.js';
import { keyed, pageOf, documentAs } from '../core/response-schemas.js';
import { guestVisibilityOf, reservationJson, reservationSchema } from '../services/reservations/reservation-json.js';
import { getVisibleReservation, listReservations } from '../services/reservations/list-reservations.js';
import { listReservationHistory, reservationHistoryEntrySchema } from '../services/reservations/reservation-history.js';

const idParams = z.object({ id: z.uuid() });
const reservationAnswer = keyed('reservation', reservationSchema);

const partySize = z.number().int().min(1).max(500);
const notes = z.string().max(5000).nullable();
const externalRef = z.string().min(1).max(200).nullable();

const createBody = z.object({
  venueId: z.uuid(),
  serviceDate: isoDate.optional(),
  time: hhmm.optional(),
  partySize,
  notes: notes.optional(),
  externalRef: externalRef.optional(),
  guestId: z.uuid().optional(),
  guest: guestContactSchema.strict().optional(),
  serviceTags: z.array(z.string().trim().min(1).max(100)).max(50).optional(),
  source: z.enum(['api', 'phone', 'voice_agent', 'floor', 'walk_in']).optional(),
  sourceDetail: z.string().trim().min(1).max(200).nullable().optional(),
  status: z.enum(['created', 'confirmed']).optional(),
  tableId: z.uuid().optional(),
  tableCombinationId: z.uuid().optional(),
  force: z.boolean().optional(),
  holdId: z.uuid().optional(),
});

const patchBody = z
  .object({
    serviceDate: isoDate,
    time: hhmm,
    partySize,
    notes,
    status: z.enum(['confirmed', 'arrived', 'seated', 'released', 'completed', 'no_show']),
    tableId: z.uuid().nullable(),
    tableCombinationId: z.uuid().nullable(),
    tableLocked: z.boolean(),
    guestId: z.uuid().nullable(),
    externalRef,
    version: instantParam,
  })
  .partial();

const knownStatuses = new Set<string>(reservationStatuses);

const statusAlternatives = reservationStatuses.join('|');

/**
 * `status=a,b` or `status=a&status=b`; any unknown value is a 400 naming `status`. The document
 * lists the values (the array's enum, the comma list's pattern), so a typo fails in a client too.
 */
const statusInput = documentAs(z.union([z.string(), z.array(z.string())]), {
  anyOf: [
    {
      type: 'string',
      pattern: `^\\s*(${statusAlternatives})(\\s*,\\s*(${statusAlternatives}))*\\s*$`,
      description: 'One status, or several separated by commas.',
    },
    { type: 'array', items: { type: 'string', enum: [...reservationStatuses] } },
  ],
});
const statusList = statusInput.transform((value, ctx) => {
  const list = (Array.isArray(value) ? value : [value]).flatMap((s) => s.split(',')).map((s) => s.trim());
  if (!list.length || list.some((s) => !knownStatuses.has(s))) {
    ctx.addIssue({ code: 'custom', message: `must be among ${reservationStatuses.join(', ')}` });
    return z.NEVER;
  }
  return list as ReservationStatus[];
});

const listQuery = listQuerySchema.extend({
  venueId: z.uuid().optional(),
  from: isoDate.optional(),
  to: isoDate.optional(),
  status: statusList.optional(),
  guestId: z.uuid().optional(),
  externalRef: z.string().min(1).max(200).optional(),
});

/** The expected version from If-Match (quoted or bare, docs/api.md "Requests") or the body's `version`. */
function expectedVersion(header: string | undefined, bodyVersion: Date | undefined): Date | undefined {
  if (header !== undefined) {
    const value = header
      .trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1');
    const date = new Date(value);
    if (!value || !isAnswerableInstant(date)) throw ApiError.invalid(['If-Match'], 'If-Match must be the updatedAt read earlier.');
    return date;
  }
  return bodyVersion;
}

export const reservationRoutes = [
  defineRoute({
    method: 'post',
    path: '/reservations',
    tag: 'Reservations',
    summary: 'Book a table',
    description:
      'Runs the availability engine and assigns a table. 409 `no_availability` carries `details.reason` and `details.alternatives`. ' +
      'Publishable keys may book without externalRef, serviceTags, guestId, tableId, tableCombinationId, status, source or force. ' +
      'With `holdId` (a live hold of the same key) the held table is booked and the hold consumed; venue, date, time and party size ' +
      "must equal the hold's (else 400 naming them). A missing, expired, consumed or foreign hold books normally when the slot is " +
      'still free, else 409 `no_availability` with `details.reason: hold_expired`.',
    scope: 'reservations:write',
    widget: true,
    body: createBody,
    successStatus: 201,
    operationId: 'createReservation',
    responses: { 201: reservationAnswer },
    errors: ['no_availability', 'conflict'],
    examples: { request: exampleCreateReservation, response: { reservation: exampleReservation, livemode: true } },
    handler: async ({ auth, body, log }) => {
      const parts = await createReservation(auth, body, log);
      return { body: { reservation: reservationJson(parts, guestVisibilityOf(auth)) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/reservations',
    tag: 'Reservations',
    summary: 'List reservations (by startsAt)',
    description: '`from` and `to` are serviceDates, both included; `status` takes one status or several separated by commas.',
    scope: 'reservations:read',
    query: listQuery,
    operationId: 'listReservations',
    responses: { 200: pageOf(reservationSchema) },
    handler: async ({ auth, query, services }) => {
      const page = await listReservations(auth, { ...query, cursorKey: services.cursorKey });
      const visibility = guestVisibilityOf(auth);
      return { body: { data: page.parts.map((p) => reservationJson(p, visibility)), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/reservations/:id',
    tag: 'Reservations',
    summary: 'Read a reservation',
    scope: 'reservations:read',
    params: idParams,
    operationId: 'getReservation',
    responses: { 200: reservationAnswer },
    examples: { response: { reservation: exampleReservation, livemode: true } },
    handler: async ({ auth, params }) => ({
      body: { reservation: reservationJson(await getVisibleReservation(auth, params.id), guestVisibilityOf(auth)) },
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/reservations/:id/history',
    tag: 'Reservations',
    summary: "A reservation's history: its events with who made each change and what changed",
    description:
      'Oldest first. `actor.kind`: api_key (a secret key, `name` its name), widget (a publishable key), system (worker-timers, worker-events; ' +
      '`unrecorded` for events older than the actor record), import (an import, `name` the key that submitted it). `changes` lists the fields among ' +
      'status, serviceDate, time, partySize, notes, table, guestId, externalRef, needsAttention, tableAssigned that differ from the previous entry ' +
      '(from null for the first). Imports emit no events but appear here.',
    scope: 'reservations:read',
    params: idParams,
    query: listQuerySchema,
    responses: { 200: pageOf(reservationHistoryEntrySchema) },
    handler: async ({ auth, params, query, services }) => ({
      body: await listReservationHistory(auth, params.id, { ...query, cursorKey: services.cursorKey }),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/reservations/:id',
    tag: 'Reservations',
    summary: 'Confirm, move, change the status, table or guest of a reservation',
    description:
      'arrived, seated, released, completed, no_show, tableId / tableCombinationId and tableLocked also need floor:write. ' +
      'A table given explicitly locks it (tableLocked: true: table optimisation never moves the reservation), tableId: null unlocks it; ' +
      'tableLocked sent in the same request wins. ' +
      'A stale If-Match or `version` answers 409 `conflict` with `details.reason: version_mismatch`.',
    scope: 'reservations:write',
    params: idParams,
    body: patchBody,
    ifMatch: true,
    operationId: 'updateReservation',
    responses: { 200: reservationAnswer },
    errors: ['no_availability', 'conflict'],
    examples: {
      request: { status: 'confirmed' },
      response: { reservation: { ...exampleReservation, status: 'confirmed' }, livemode: true },
    },
    handler: async ({ auth, params, body, req, log }) => {
      const { version, ...patch } = body;
      const parts = await updateReservation(auth, params.id, patch, expectedVersion(req.get('if-match'), version), undefined, log);
      return { body: { reservation: reservationJson(parts, guestVisibilityOf(auth)) } };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/reservations/:id',
    tag: 'Reservations',
    summary: 'Cancel a reservation',
    description: 'Cancels from created, confirmed or arrived; an already cancelled reservation answers 200 unchanged.',
    scope: 'reservations:write',
    params: idParams,
    ifMatch: true,
    operationId: 'cancelReservation',
    responses: { 200: reservationAnswer },
    errors: ['conflict'],
    handler: async ({ auth, params, req, log }) => {
      const parts = await cancelReservation(auth, params.id, expectedVersion(req.get('if-match'), undefined), log);
      return { body: { reservation: reservationJson(parts, guestVisibilityOf(auth)) } };
    },
  }),
];
