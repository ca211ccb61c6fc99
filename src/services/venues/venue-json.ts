import type { venues } from '../../db/schema/index.js';

export type VenueRow = typeof venues.$inferSelect;

export function venueJson(v: VenueRow) {
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
    createdAt: v.createdAt.toISOString(),
    updatedAt: v.updatedAt.toISOString(),
  };
}
