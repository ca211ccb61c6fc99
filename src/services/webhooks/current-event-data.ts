import type { events } from '../../db/schema/index.js';
import { getGuestView } from '../guests/guest-view.js';
import { getWaitlistEntryView } from '../waitlist/waitlist-view.js';

type EventRow = typeof events.$inferSelect;

/**
 * The one place that turns an event into the `data` of its webhook: the subject's CURRENT state
 * (interface.md §6: a webhook sent after a wait carries the current time and status), merged over
 * the data stored with the event so that extra fields such as `reason` stay. When the subject no
 * longer exists, or has no current view, the data as of the event is sent.
 */
export async function getCurrentEventData(event: Pick<EventRow, 'subjectType' | 'subjectId' | 'data'>): Promise<Record<string, unknown>> {
  if (!event.subjectId) return event.data;
  switch (event.subjectType) {
    case 'guest':
      return { ...event.data, ...((await getGuestView(event.subjectId)) ?? {}) };
    case 'waitlist_entry':
      return { ...event.data, ...((await getWaitlistEntryView(event.subjectId)) ?? {}) };
    // Reservations: the data as of the event until their view exists.
    case 'reservation':
    case 'none':
      return event.data;
  }
}
