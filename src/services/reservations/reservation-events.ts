import { orderEvents } from '../../lib/availability/status-transitions.js';
import type { ReservationEventType } from '../../lib/event-catalogue.js';
import type { Emit } from '../outbox/outbox.js';
import { reservationJson, type ReservationParts } from './reservation-json.js';

/** What every event about this reservation carries: the reservation as it is now, guest data included. */
export function reservationEventFields(parts: ReservationParts, livemode: boolean) {
  const { organisationId, venueId, id } = parts.row;
  return {
    organisationId,
    venueId,
    livemode,
    subjectType: 'reservation' as const,
    subjectId: id,
    data: { reservation: reservationJson(parts, 'full') },
  };
}

/** Emits the events of one change in catalogue order, each carrying the reservation as it is now, guest data included. */
export function emitReservationEvents(emit: Emit, parts: ReservationParts, types: Iterable<ReservationEventType>, livemode: boolean): void {
  const ordered = orderEvents(types);
  if (!ordered.length) return;
  const fields = reservationEventFields(parts, livemode);
  for (const type of ordered) emit({ ...fields, type });
}
