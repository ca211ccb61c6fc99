import { z } from 'zod';
import { tableOptimisationValues, turnTimeSourceValues, type venues } from '../../db/schema/index.js';
import { component, instant, uuid } from '../../core/response-schemas.js';

export type VenueRow = typeof venues.$inferSelect;

export const venueSchema = component(
  'Venue',
  z.object({
    id: uuid,
    organisationId: uuid,
    name: z.string(),
    timezone: z.string().describe('IANA zone'),
    countryCode: z.string().describe('ISO 3166 alpha-2'),
    slotIntervalMinutes: z.number().int(),
    bookingHorizonDays: z.number().int(),
    minNoticeMinutes: z.number().int(),
    lateToleranceMinutes: z.number().int(),
    noShowToleranceMinutes: z.number().int().nullable().describe('null: no automatic no-show'),
    tableOptimisation: z
      .enum(tableOptimisationValues)
      .describe(
        'on: to seat a new booking the engine may move unlocked parties to other tables at the same times (docs/reservations.md "Table optimisation")',
      ),
    turnTimeSource: z
      .enum(turnTimeSourceValues)
      .describe(
        'configured: turn times from the turn-time rules; learned: from the p50 the venue\'s completed reservations show (docs/reservations.md "Turn times and wait quotes")',
      ),
    createdAt: instant,
    updatedAt: instant,
  }),
  'A venue (docs/venue-configuration.md).',
);

export function venueJson(v: VenueRow): z.output<typeof venueSchema> {
  return {
    id: v.id,
    organisationId: v.organisationId,
    name: v.name,
    timezone: v.timezone,
    countryCode: v.countryCode,
    slotIntervalMinutes: v.slotIntervalMinutes,
    bookingHorizonDays: v.bookingHorizonDays,
    minNoticeMinutes: v.minNoticeMinutes,
    lateToleranceMinutes: v.lateToleranceMinutes,
    noShowToleranceMinutes: v.noShowToleranceMinutes,
    tableOptimisation: v.tableOptimisation,
    turnTimeSource: v.turnTimeSource,
    createdAt: v.createdAt.toISOString(),
    updatedAt: v.updatedAt.toISOString(),
  };
}
