import { hasScope, isPublishable, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { GuestContactInput } from '../guests/guest-input.js';
import type { HoldRow } from '../holds/hold-service.js';

// The booking's first step (POST /reservations, docs/reservations.md): what its request says and
// who may say it, decided before anything is read. Pure: no I/O, unit-tested by tables of cases
// (test/unit/booking-request.test.ts).

export type CreateSource = 'api' | 'phone' | 'voice_agent' | 'floor' | 'walk_in' | 'waitlist';

export interface CreateReservationInput {
  venueId: string;
  /** Required except for walk-ins, which start now. */
  serviceDate?: string;
  time?: string;
  partySize: number;
  notes?: string | null;
  externalRef?: string | null;
  guestId?: string;
  guest?: GuestContactInput;
  /** Service tags of the venue added to the reservation's guest. */
  serviceTags?: string[];
  source?: CreateSource;
  sourceDetail?: string | null;
  status?: 'created' | 'confirmed';
  tableId?: string;
  tableCombinationId?: string;
  force?: boolean;
  /** A slot hold of this key to book (docs/reservations.md "Slot holds"). */
  holdId?: string;
  /** Not an API field: the party is at the venue now (a waiting-list conversion without a time), so it is booked now, outside the booking window. */
  startNow?: boolean;
}

/** docs/api.md "Keys, limits": what a publishable (widget) key may not send. */
const widgetForbidden = ['externalRef', 'serviceTags', 'guestId', 'tableId', 'tableCombinationId', 'status', 'source', 'force'] as const;

function checkPermissions(auth: AuthContext, input: CreateReservationInput): void {
  if (isPublishable(auth)) {
    const sent = widgetForbidden.filter((field) => input[field] !== undefined);
    if (sent.length) {
      throw new ApiError('forbidden', `A publishable key may not send ${sent.join(', ')}.`, { reason: 'publishable_key', fields: sent });
    }
    return;
  }
  // Choosing tables, overriding the engine and seating a walk-in are floor operations.
  const needsFloor =
    input.tableId !== undefined || input.tableCombinationId !== undefined || input.force === true || input.source === 'walk_in';
  if (needsFloor && !hasScope(auth, 'floor:write')) {
    throw new ApiError('insufficient_scope', 'Tables, force and walk-ins need the scope floor:write.', { requiredScope: 'floor:write' });
  }
}

function checkShape(input: CreateReservationInput): void {
  const walkIn = input.source === 'walk_in';
  const missing = walkIn || input.startNow ? [] : (['serviceDate', 'time'] as const).filter((f) => input[f] === undefined);
  if (missing.length) throw ApiError.invalid([...missing], `Missing: ${missing.join(', ')}.`);
  if (walkIn && input.status !== undefined) throw ApiError.invalid(['status'], 'A walk-in starts seated; status cannot be chosen.');
  if (walkIn && input.holdId !== undefined) throw ApiError.invalid(['holdId'], 'A walk-in starts now; it cannot book a hold.');
  if (input.tableId !== undefined && input.tableCombinationId !== undefined) {
    throw ApiError.invalid(['tableId', 'tableCombinationId'], 'Give a table or a combination, not both.');
  }
  if (input.guestId !== undefined && input.guest !== undefined)
    throw ApiError.invalid(['guestId', 'guest'], 'Give guestId or guest, not both.');
  if (input.serviceTags !== undefined && input.guestId === undefined && input.guest === undefined) {
    throw ApiError.invalid(['serviceTags'], 'Service tags belong to a guest: give guestId or guest.');
  }
}

/** Step 1's output: the input, and what follows from it before anything is read. */
export interface CheckedBooking {
  input: CreateReservationInput;
  walkIn: boolean;
  /** A walk-in, or a waiting-list party at the venue now: booked now, outside the booking window. */
  startsNow: boolean;
  now: number;
}

/** Step 1: who may send what, and which fields go together (400 and 403 before anything is read). */
export function checkRequest(auth: AuthContext, input: CreateReservationInput, now: number): CheckedBooking {
  checkPermissions(auth, input);
  checkShape(input);
  const walkIn = input.source === 'walk_in';
  return { input, walkIn, startsNow: walkIn || input.startNow === true, now };
}

/** docs/reservations.md "Slot holds": a booking of a hold repeats what was held; the fields that differ are named. */
export function checkMatchesHold(input: CreateReservationInput, hold: HoldRow): void {
  const differing = [
    input.venueId !== hold.venueId && 'venueId',
    input.serviceDate !== hold.serviceDate && 'serviceDate',
    input.time !== hold.time && 'time',
    input.partySize !== hold.partySize && 'partySize',
    input.tableId !== undefined && input.tableId !== hold.tableId && 'tableId',
    input.tableCombinationId !== undefined && input.tableCombinationId !== hold.tableCombinationId && 'tableCombinationId',
  ].filter((f): f is string => f !== false);
  if (differing.length) throw ApiError.invalid(differing, `These fields differ from the hold: ${differing.join(', ')}.`);
}
