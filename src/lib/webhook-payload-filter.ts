/** What the reader of a stored webhook envelope (GET /webhook-deliveries) or of an event (GET /events, the live stream) may see. */
export interface PayloadReader {
  /** guests:read */
  guests: boolean;
  /** reservations:read or events:read */
  reservations: boolean;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function idOnly(value: unknown, id: unknown = isObject(value) ? value.id : undefined): Json | null {
  return value === null || value === undefined ? null : { id: typeof id === 'string' ? id : null };
}

function reduceReservationGuest(reservation: Json): Json {
  const out: Json = { ...reservation };
  // The reservation's guest summary has no id of its own: the reservation's guestId is it.
  if ('guest' in out) out.guest = idOnly(out.guest, reservation.guestId);
  if ('guestDetails' in out) out.guestDetails = idOnly(out.guestDetails);
  return out;
}

/**
 * The envelope as a reader may see it (docs/api.md, Webhook management): without guests:read the
 * guest data is reduced to its id; without reservations:read and events:read the reservation is null.
 */
export function filterEnvelopeForReader(envelope: Json, reader: PayloadReader): Json {
  if (!isObject(envelope.data)) return envelope;
  const data: Json = { ...envelope.data };
  if ('reservation' in data && isObject(data.reservation)) {
    data.reservation = !reader.reservations ? null : reader.guests ? data.reservation : reduceReservationGuest(data.reservation);
  }
  if (!reader.guests) {
    if ('guest' in data) data.guest = idOnly(data.guest);
    if (isObject(data.waitlistEntry)) data.waitlistEntry = { ...data.waitlistEntry, name: null, phone: null };
  }
  return { ...envelope, data };
}
