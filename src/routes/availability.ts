import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { ApiError } from '../core/errors.js';
import { hhmm, isoDate } from '../core/validation.js';
import { daysBetween } from '../lib/local-time.js';
import { exampleAvailable } from '../http/openapi-examples.js';
import { keyed } from '../core/response-schemas.js';
import {
  availabilityAnswerSchema,
  checkAvailability,
  daysAnswerSchema,
  listDays,
  listSlots,
  slotsAnswerSchema,
} from '../services/availability/availability-service.js';
import {
  HOLD_TTL_SECONDS,
  MAX_LIVE_HOLDS_PER_CALLER,
  createHold,
  getHold,
  holdJson,
  holdSchema,
  releaseHold,
} from '../services/holds/hold-service.js';

/** docs/reservations.md / docs/api.md "Keys, limits": at most 62 days, both ends included. */
const maxRangeDays = 62;

const partySize = z.coerce.number().int().min(1).max(500);

const availabilityQuery = z.object({ venueId: z.uuid(), serviceDate: isoDate, time: hhmm, partySize });
const slotsQuery = z.object({ venueId: z.uuid(), serviceDate: isoDate, partySize, include: z.enum(['unavailable']).optional() });
const daysQuery = z.object({ venueId: z.uuid(), from: isoDate, to: isoDate, partySize });
const holdBody = z.object({
  venueId: z.uuid(),
  serviceDate: isoDate,
  time: hhmm,
  partySize: z.number().int().min(1).max(500),
  tableId: z.uuid().optional(),
  ttlSeconds: z.number().int().min(HOLD_TTL_SECONDS.min).max(HOLD_TTL_SECONDS.max).optional(),
});
const holdParams = z.object({ id: z.uuid() });
const holdAnswer = keyed('hold', holdSchema);

export const availabilityRoutes = [
  defineRoute({
    method: 'get',
    path: '/availability',
    operationId: 'checkAvailability',
    responses: { 200: availabilityAnswerSchema },
    examples: { response: exampleAvailable },
    tag: 'Availability',
    summary: 'Whether a party can be booked at a time, with near alternatives when not',
    description:
      'An unavailable time is a 200 with `available: false`, a `reason` and up to 6 `alternatives`. When available, `reason` is null.',
    scope: 'reservations:read',
    widget: true,
    query: availabilityQuery,
    handler: async ({ auth, query }) => ({ body: await checkAvailability(auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/availability/slots',
    operationId: 'listAvailableSlots',
    responses: { 200: slotsAnswerSchema },
    tag: 'Availability',
    summary: 'Every available time of a day for a party; with include=unavailable, every time of the day explained',
    description:
      'Without `include`, `data` lists the available grid times as proposals. With `include=unavailable` it lists every grid time of the ' +
      "day's shifts — closed shifts included, and on past lastSeating to each shift's end — as `{time, available, reason}`, with the " +
      "proposal's fields when available; `reason` is `available` or the reason GET /availability gives at that time (the same engine).",
    scope: 'reservations:read',
    widget: true,
    query: slotsQuery,
    handler: async ({ auth, query }) => ({ body: await listSlots(auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/availability/days',
    operationId: 'listAvailableDays',
    responses: { 200: daysAnswerSchema },
    tag: 'Availability',
    summary: 'Availability over a range of days (at most 62, both ends included)',
    scope: 'reservations:read',
    widget: true,
    query: daysQuery,
    handler: async ({ auth, query }) => {
      const span = daysBetween(query.from, query.to);
      if (span < 0) throw ApiError.invalid(['to'], '`to` must not be before `from`.');
      if (span + 1 > maxRangeDays) throw ApiError.invalid(['to'], `The range is at most ${maxRangeDays} days, both ends included.`);
      return { body: await listDays(auth, query) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/availability/holds',
    tag: 'Availability',
    summary: 'Hold a table for a party while the guest confirms',
    description:
      `The hold occupies its table and counts toward pacing exactly like a reservation until \`expiresAt\` (ttlSeconds ${HOLD_TTL_SECONDS.min}..${HOLD_TTL_SECONDS.max}, ` +
      `default ${HOLD_TTL_SECONDS.default}); from then on it occupies nothing. Book it with POST /reservations and \`holdId\`. ` +
      'Unavailable → 409 `no_availability` as POST /reservations. `tableId` needs floor:write and is refused to publishable keys. ' +
      `A publishable key keeps at most ${MAX_LIVE_HOLDS_PER_CALLER} live holds per caller IP (else 429 \`rate_limited\`). Holds emit no events.`,
    scope: 'reservations:write',
    widget: true,
    body: holdBody,
    successStatus: 201,
    operationId: 'createHold',
    responses: { 201: holdAnswer },
    errors: ['no_availability'],
    handler: async ({ auth, body, req }) => ({ body: { hold: holdJson(await createHold(auth, body, req.ip ?? null)) } }),
  }),
  defineRoute({
    method: 'get',
    path: '/availability/holds/:id',
    tag: 'Availability',
    summary: 'Read a live hold of this key',
    description: '404 once it expired, was released or was booked, and for the holds of other keys.',
    scope: 'reservations:write',
    widget: true,
    params: holdParams,
    operationId: 'getHold',
    responses: { 200: holdAnswer },
    handler: async ({ auth, params }) => ({ body: { hold: holdJson(await getHold(auth, params.id)) } }),
  }),
  defineRoute({
    method: 'delete',
    path: '/availability/holds/:id',
    tag: 'Availability',
    summary: 'Release a hold',
    description: 'Frees its table at once. Idempotent: 204 whether or not the hold still existed.',
    scope: 'reservations:write',
    widget: true,
    params: holdParams,
    successStatus: 204,
    operationId: 'releaseHold',
    responses: { 204: null },
    handler: async ({ auth, params }) => {
      await releaseHold(auth, params.id);
    },
  }),
];
