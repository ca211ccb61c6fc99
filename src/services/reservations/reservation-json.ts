import { z } from 'zod';
import { reservationSourceValues, reservationStatusValues, type reservations } from '../../db/schema/index.js';
import { hasScope, isPublishable, type AuthContext } from '../../core/auth-context.js';
import { component, count, instant, localTime, serviceDate, uuid } from '../../core/response-schemas.js';
import { guestSummaryJson, guestSummarySchema, reservationGuestJson, reservationGuestSchema, type GuestRow } from '../guests/guest-json.js';

export type ReservationRow = typeof reservations.$inferSelect;

/** A table a reservation sits at (ReservationTable.tables of docs/api.md). */
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
 * (guest and guestDetails null), `widget` for a publishable key (docs/api.md "Keys, limits": guest null,
 * guestId null, no guestDetails).
 */
export type GuestVisibility = 'full' | 'hidden' | 'widget';

export function guestVisibilityOf(auth: AuthContext): GuestVisibility {
  if (isPublishable(auth)) return 'widget';
  return hasScope(auth, 'guests:read') ? 'full' : 'hidden';
}

export const reservationTableSchema = component(
  'ReservationTable',
  z.object({
    tableId: uuid.nullable(),
    tableCombinationId: uuid.nullable(),
    tables: z.array(z.object({ id: uuid, name: z.string(), minSeats: count, maxSeats: count })),
  }),
  'Where a reservation sits: one table or a combination, and the tables it occupies.',
);

export const reservationSchema = component(
  'Reservation',
  z.object({
    id: uuid,
    venueId: uuid,
    serviceDate,
    time: localTime,
    startsAt: instant,
    endsAt: instant,
    partySize: z.number().int().min(1),
    status: z.enum(reservationStatusValues),
    tableAssigned: z.boolean(),
    tableLocked: z
      .boolean()
      .describe(
        'Its table was chosen explicitly (tableId / tableCombinationId, or PATCH tableLocked: true): table optimisation never moves it.',
      ),
    needsAttention: z.boolean().describe('Valid, but must be arranged on the floor.'),
    notes: z.string().nullable(),
    source: z.enum(reservationSourceValues),
    sourceDetail: z.string().nullable(),
    externalRef: z.string().nullable(),
    guestId: uuid.nullable(),
    updatedAt: instant.describe('Also the version for If-Match.'),
    guest: guestSummarySchema.nullable().describe('null without guests:read, and for publishable keys.'),
    guestDetails: reservationGuestSchema.nullable().optional().describe('null without guests:read; absent for publishable keys.'),
    table: reservationTableSchema.nullable(),
  }),
  'A reservation (docs/api.md).',
);

/** Reservation of docs/api.md with `guest`, `guestDetails` and `table` (null where none). */
export function reservationJson(
  { row, tables, guest }: ReservationParts,
  visibility: GuestVisibility = 'full',
): z.output<typeof reservationSchema> {
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
    tableLocked: row.tableLocked,
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
