import type { events } from '../../db/schema/index.js';
import { getGuestView } from '../guests/guest-view.js';
import { getWaitlistEntryView } from '../waitlist/waitlist-view.js';

type EventRow = typeof events.$inferSelect;

const currentViews: Record<
  Exclude<EventRow['subjectType'], 'none' | 'reservation'>,
  (id: string) => Promise<Record<string, unknown> | null>
> = {
  guest: getGuestView,
  waitlist_entry: getWaitlistEntryView,
};

/**
 * The one place that turns an event into the `data` of its webhook: the subject's CURRENT state
 * (docs/webhooks.md: a webhook sent after a wait carries the current time and status), merged over
 * the data stored with the event so that extra fields such as `reason` stay. When the subject no
 * longer exists, the data as of the event is sent. A reservation's view is read with the delivery
 * (readDeliveryContext, one round trip) and given as `reservationView`; other subjects are read here.
 */
export async function getCurrentEventData(
  event: Pick<EventRow, 'subjectType' | 'subjectId' | 'data'>,
  reservationView: Record<string, unknown> | null,
): Promise<Record<string, unknown>> {
  if (!event.subjectId || event.subjectType === 'none') return event.data;
  const current = event.subjectType === 'reservation' ? reservationView : await currentViews[event.subjectType](event.subjectId);
  return current ? { ...event.data, ...current } : event.data;
}
