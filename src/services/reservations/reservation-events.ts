import { orderEvents } from '../../lib/availability/status-transitions.js';
import type { ReservationEventType } from '../../lib/event-catalogue.js';
import type { Emit } from '../events/outbox.js';
import { reservationJson, type ReservationParts } from './reservation-json.js';

/** Emits the events of one change in catalogue order, each carrying the reservation as it is now, guest data included. */
export function emitReservationEvents(emit: Emit, parts: ReservationParts, types: Iterable<ReservationEventType>, livemode: boolean): void {
  const ordered = orderEvents(types);
  if (!ordered.length) return;
  const data = { reservation: reservationJson(parts, 'full') };
  for (const type of ordered) {
    emit({ organisationId: parts.row.organisationId, venueId: parts.row.venueId, livemode, type, subjectType: 'reservation', subjectId: parts.row.id, data });
  }
}
