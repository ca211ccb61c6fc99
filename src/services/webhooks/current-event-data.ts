import type { events } from '../../db/schema/index.js';
import { getGuestView } from '../guests/guest-view.js';
import { getReservationView } from '../reservations/reservation-view.js';
import { getWaitlistEntryView } from '../waitlist/waitlist-view.js';

type EventRow = typeof events.$inferSelect;

const currentViews: Record<Exclude<EventRow['subjectType'], 'none'>, (id: string) => Promise<Record<string, unknown> | null>> = {
  reservation: getReservationView,
  guest: getGuestView,
  waitlist_entry: getWaitlistEntryView,
};

/**
 * The one place that turns an event into the `data` of its webhook: the subject's CURRENT state
 * (interface.md §6: a webhook sent after a wait carries the current time and status), merged over
 * the data stored with the event so that extra fields such as `reason` stay. When the subject no
 * longer exists, the data as of the event is sent.
 */
export async function getCurrentEventData(event: Pick<EventRow, 'subjectType' | 'subjectId' | 'data'>): Promise<Record<string, unknown>> {
  if (!event.subjectId || event.subjectType === 'none') return event.data;
  const current = await currentViews[event.subjectType](event.subjectId);
  return current ? { ...event.data, ...current } : event.data;
}
