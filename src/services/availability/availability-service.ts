import { z } from 'zod';
import { db } from '../../db/client.js';
import type { AuthContext } from '../../core/auth-context.js';
import { component, count, localTime, proposalSchema, serviceDate, uuid } from '../../core/response-schemas.js';
import { Occupancy } from '../../lib/availability/occupancy.js';
import type { Booking } from '../../lib/availability/types.js';
import { VenueDay } from '../../lib/availability/venue-day.js';
import { addDays, daysBetween } from '../../lib/local-time.js';
import { loadVenueDay } from './venue-day-loader.js';
import { turnTimeSourceValues } from '../../db/schema/index.js';

export const unavailableReasons = ['closed', 'no_shift', 'after_last_seating', 'no_turn_time_rule', 'no_table', 'pacing_full'] as const;

export const availabilityAnswerSchema = z
  .union([
    z.object({
      venueId: uuid,
      serviceDate,
      partySize: z.number().int(),
      timezone: z.string(),
      available: z.literal(true),
      ...proposalSchema.shape,
      reason: z.literal('available'),
      alternatives: z.array(proposalSchema).max(0),
    }),
    z.object({
      venueId: uuid,
      serviceDate,
      partySize: z.number().int(),
      timezone: z.string(),
      available: z.literal(false),
      time: localTime,
      reason: z.enum(unavailableReasons),
      alternatives: z.array(proposalSchema).max(6),
    }),
  ])
  .describe('The verdict for one time: the proposal when available, else the reason and up to 6 near alternatives.');

const { time: _time, ...proposalFields } = proposalSchema.shape;

export const explainedSlotSchema = component(
  'ExplainedSlot',
  z.union([
    z.object({
      time: localTime,
      available: z.literal(true),
      reason: z.literal('available'),
      ...proposalFields,
      turnTimeSource: z
        .enum(turnTimeSourceValues)
        .describe(
          'where turnTimeMinutes comes from: the configured rule, or the learned p50 (docs/reservations.md "Turn times and wait quotes")',
        ),
    }),
    z.object({ time: localTime, available: z.literal(false), reason: z.enum(unavailableReasons) }),
  ]),
  'One grid time of GET /availability/slots?include=unavailable (docs/reservations.md "Explained availability"): the reason GET /availability gives at that time, with the proposal when available.',
);

const slotsOf = <T extends z.ZodType>(item: T) =>
  z.object({ venueId: uuid, serviceDate, partySize: z.number().int(), timezone: z.string(), data: z.array(item), nextCursor: z.null() });

/** The available grid times as proposals; with `include=unavailable`, every grid time explained. */
export const slotsAnswerSchema = z.union([slotsOf(proposalSchema), slotsOf(explainedSlotSchema)]);

export const daysAnswerSchema = z.object({
  venueId: uuid,
  from: serviceDate,
  to: serviceDate,
  partySize: z.number().int(),
  timezone: z.string(),
  data: z.array(z.object({ serviceDate, available: z.boolean(), slotCount: count })),
  nextCursor: z.null(),
});

export interface AvailabilityQuery {
  venueId: string;
  serviceDate: string;
  time: string;
  partySize: number;
}

/** GET /availability: the verdict for one time; an unavailable time is an answer, not an error. */
export async function checkAvailability(auth: AuthContext, q: AvailabilityQuery) {
  const now = Date.now();
  const { venue, config, bookings, reservationsKey } = await loadVenueDay(db(), auth, q.venueId, q.serviceDate, q.serviceDate);
  const answer = new VenueDay(config, q.serviceDate, bookings, now, { reservationsKey }).check(q.time, q.partySize);
  return {
    venueId: venue.id,
    serviceDate: q.serviceDate,
    partySize: q.partySize,
    timezone: venue.timezone,
    available: answer.available,
    time: q.time,
    ...answer.proposal,
    // docs/api.md types `reason` as a string on every answer; a bookable time says so.
    reason: answer.reason ?? 'available',
    alternatives: answer.alternatives,
  };
}

/** GET /availability/slots: every available grid time of the day; with `include=unavailable` every grid time, explained (docs/reservations.md "Explained availability"). */
export async function listSlots(auth: AuthContext, q: Omit<AvailabilityQuery, 'time'> & { include?: 'unavailable' }) {
  const now = Date.now();
  const { venue, config, bookings, reservationsKey } = await loadVenueDay(db(), auth, q.venueId, q.serviceDate, q.serviceDate);
  const day = new VenueDay(config, q.serviceDate, bookings, now, { reservationsKey });
  const data = q.include === 'unavailable' ? day.explainSlots(q.partySize) : day.slots(q.partySize);
  return { venueId: venue.id, serviceDate: q.serviceDate, partySize: q.partySize, timezone: venue.timezone, data, nextCursor: null };
}

/** GET /availability/days: the whole range is loaded at once and computed in memory. */
export async function listDays(auth: AuthContext, q: { venueId: string; from: string; to: string; partySize: number }) {
  const now = Date.now();
  const { venue, config, bookings, reservationsKey } = await loadVenueDay(db(), auth, q.venueId, q.from, q.to);
  const occupancy = new Occupancy(bookings, now);
  const byDate = new Map<string, Booking[]>();
  for (const b of bookings) {
    let list = byDate.get(b.serviceDate);
    if (!list) byDate.set(b.serviceDate, (list = []));
    list.push(b);
  }
  const data = [];
  for (let i = 0; i <= daysBetween(q.from, q.to); i++) {
    const serviceDate = addDays(q.from, i);
    const slotCount = new VenueDay(config, serviceDate, byDate.get(serviceDate) ?? [], now, {
      range: { occupancy, bookings },
      reservationsKey,
    }).countSlots(q.partySize);
    data.push({ serviceDate, available: slotCount > 0, slotCount });
  }
  return { venueId: venue.id, from: q.from, to: q.to, partySize: q.partySize, timezone: venue.timezone, data, nextCursor: null };
}
