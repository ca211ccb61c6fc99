import type { reservations } from '../../db/schema/index.js';
import { hasScope, isPublishable, type AuthContext } from '../../http/auth.js';
import { guestSummaryJson, reservationGuestJson, type GuestRow } from '../guests/guest-json.js';

export type ReservationRow = typeof reservations.$inferSelect;

/** A table a reservation sits at (ReservationTable.tables of interface.md §2). */
export interface SeatedTable {
  id: string;
  name: string;
  minSeats: number;
  maxSeats: number;
}

/** A reservation with what its response shows besides its own columns. */
export interface ReservationParts {
  row: ReservationRow;
  tables: readonly SeatedTable[];
  guest: GuestRow | null;
}

/**
 * How much guest data a reader sees: `full` with guests:read (and in events), `hidden` without it
 * (guest and guestDetails null), `widget` for a publishable key (decisions §2: guest null,
 * guestId null, no guestDetails).
 */
export type GuestVisibility = 'full' | 'hidden' | 'widget';

export function guestVisibilityOf(auth: AuthContext): GuestVisibility {
  if (isPublishable(auth)) return 'widget';
  return hasScope(auth, 'guests:read') ? 'full' : 'hidden';
}

/** Reservation of interface.md §2 with `guest`, `guestDetails` and `table` (null where none). */
export function reservationJson({ row, tables, guest }: ReservationParts, visibility: GuestVisibility = 'full') {
  const shownGuest = visibility === 'full' ? guest : null;
  const body = {
    id: row.id,
    venueId: row.venueId,
    serviceDate: row.serviceDate,
    time: row.time,
    startsAt: row.startsAt.toISOString(),
    endsAt: row.endsAt.toISOString(),
    partySize: row.partySize,
    status: row.status,
    tableAssigned: row.tableAssigned,
    needsAttention: row.needsAttention,
    notes: row.notes,
    source: row.source,
    sourceDetail: row.sourceDetail,
    externalRef: row.externalRef,
    guestId: visibility === 'widget' ? null : row.guestId,
    updatedAt: row.updatedAt.toISOString(),
    guest: shownGuest ? guestSummaryJson(shownGuest) : null,
    guestDetails: shownGuest ? reservationGuestJson(shownGuest) : null,
    table: tables.length
      ? {
          tableId: row.tableId,
          tableCombinationId: row.tableCombinationId,
          tables: tables.map((t) => ({ id: t.id, name: t.name, minSeats: t.minSeats, maxSeats: t.maxSeats })),
        }
      : null,
  };
  if (visibility === 'widget') {
    const { guestDetails: _omitted, ...widgetBody } = body;
    return widgetBody;
  }
  return body;
}
