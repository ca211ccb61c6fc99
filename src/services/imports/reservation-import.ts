import { and, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { db, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { apiKeys, organisations, reservations } from '../../db/schema/index.js';
import { hhmm, isoDate } from '../../core/validation.js';
import { tableHoldingStatuses } from '../../lib/availability/occupancy.js';
import type { Seating } from '../../lib/availability/seatings.js';
import type { Booking, VenueConfig } from '../../lib/availability/types.js';
import { VenueDay, isWritableSpan, resolveTurnTime } from '../../lib/availability/venue-day.js';
import { serviceDayClock } from '../../lib/local-time.js';
import { splitPersonName } from '../../lib/person-name.js';
import { parsePhone, type Phone } from '../../lib/phone.js';
import { formatMinutes, resolveServiceTime } from '../../lib/shift-schedule.js';
import { loadBookings, lockAndLoadVenueConfig } from '../availability/venue-day-loader.js';
import { hasPacing, lockPacingDay } from '../availability/venue-day-locks.js';
import { recordHistoryOnlyEvent, type Emit } from '../outbox/outbox.js';
import { applyGuestStatusChange } from '../guests/guest-counters.js';
import { findOrCreateGuest, getGuestForVenue } from '../guests/guest-service.js';
import { reservationEventFields } from '../reservations/reservation-events.js';
import type { ReservationRow } from '../reservations/reservation-json.js';
import { deleteOccupancy, occupyFirstFree, seatedTablesOf, seatingColumns } from '../reservations/table-assignment.js';
import type { VenueRow } from '../venues/venue-json.js';
import type { ImportRow } from './import-json.js';
import { parseRowsWithVenues, rejectRow, type Rejected } from './check-import-rows.js';
import { importChunkSize, type PreparedImport, type RowOutcome } from './import-contract.js';

const MINUTE_MS = 60_000;
/** The length given to an imported reservation when neither the row nor a turn-time rule says. */
export const defaultImportDurationMinutes = 120;

/** Optional text: absent, null or blank all mean "not given". */
const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .nullish()
    .transform((s) => s || undefined);

/** A row of POST /imports/reservations (docs/operations.md "Reservation imports"). */
export const reservationImportRowSchema = z
  .object({
    venueId: z.uuid(),
    serviceDate: isoDate,
    time: hhmm,
    partySize: z.number().int().min(1).max(500),
    phone: optionalText(40),
    guestName: optionalText(200),
    notes: optionalText(5000),
    externalRef: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .nullish()
      .transform((s) => s ?? undefined),
    channel: optionalText(200),
    durationMinutes: z
      .number()
      .int()
      .min(5)
      .max(720)
      .nullish()
      .transform((n) => n ?? undefined),
  })
  .strict();

type ReservationImportRow = z.output<typeof reservationImportRowSchema>;

interface CheckedRow {
  row: ReservationImportRow;
  venue: VenueRow;
  phone: Phone | null;
}

type Checked = Rejected | CheckedRow;

/**
 * Judges every row before the first write: fields, venue (of the organisation and visible to the
 * submitting key), phone, and duplicates (an externalRef already seen in an earlier row of the same
 * venue: the first one wins). Deterministic, so that a resumed run judges the rows alike.
 */
async function checkRows(record: ImportRow): Promise<Checked[]> {
  const seenRefs = new Set<string>();
  return (await parseRowsWithVenues(record, reservationImportRowSchema)).map((checked): Checked => {
    if ('rejected' in checked) return checked;
    const { row, venue } = checked;
    const phone = row.phone === undefined ? null : parsePhone(row.phone, venue.countryCode);
    if (phone === null && row.phone !== undefined) return rejectRow('invalid_phone', 'phone is not a valid phone number.', ['phone']);
    if (row.externalRef !== undefined) {
      const refKey = `${venue.id} ${row.externalRef}`;
      if (seenRefs.has(refKey))
        return rejectRow('duplicate_row', 'An earlier row of this import has the same externalRef.', ['externalRef']);
      seenRefs.add(refKey);
    }
    return { row, venue, phone };
  });
}

/** Guests are found or created like a booking's, but an import emits no event: they are dropped here. */
const noEvents: Emit = () => {};

/** Where the row sits in time: the instant of its local time (past-midnight times of a shift included) and its length. */
function timingOf(config: VenueConfig, row: ReservationImportRow): { minuteOfService: number; startsAt: number; durationMinutes: number } {
  const resolution = resolveServiceTime(config.shifts, config.closures, row.serviceDate, row.time);
  const startsAt = serviceDayClock(config.venue.timezone, row.serviceDate)(resolution.minuteOfService);
  const turn = resolveTurnTime(config, resolution.shift?.id ?? '', row.serviceDate, row.partySize);
  return {
    minuteOfService: resolution.minuteOfService,
    startsAt,
    durationMinutes: row.durationMinutes ?? turn?.minutes ?? defaultImportDurationMinutes,
  };
}

/** The configuration the engine judges a row with: the row's durationMinutes replaces every turn-time rule, learned ones too. */
function configForRow(config: VenueConfig, row: ReservationImportRow): VenueConfig {
  if (row.durationMinutes === undefined) return config;
  return {
    ...config,
    venue: { ...config.venue, turnTimeSource: 'configured' },
    turnTimeRules: [{ id: 'import', shiftId: null, minPartySize: 1, maxPartySize: 500, durationMinutes: row.durationMinutes }],
  };
}

function bookingOf(r: ReservationRow, tableIds: readonly string[]): Booking {
  return {
    id: r.id,
    serviceDate: r.serviceDate,
    time: r.time,
    partySize: r.partySize,
    status: r.status,
    startsAt: r.startsAt.getTime(),
    endsAt: r.endsAt.getTime(),
    tableIds,
  };
}

/**
 * What one chunk transaction has read: each venue's configuration (read once, FOR SHARE, so that
 * a floor change waits for the chunk), the bookings of each (venue, serviceDate), loaded after the
 * pacing lock of that day and kept current with the chunk's own writes, and the reservations the
 * chunk's externalRefs name, locked.
 */
class ChunkState {
  private readonly configs = new Map<string, VenueConfig>();
  private readonly bookings = new Map<string, Booking[]>();
  private existingByRef: Map<string, ReservationRow> | undefined;

  constructor(
    readonly tx: Tx,
    private readonly organisationId: string,
  ) {}

  async config(venueId: string): Promise<VenueConfig> {
    let config = this.configs.get(venueId);
    if (!config) {
      const access = { organisationId: this.organisationId, venueIds: null };
      ({ config } = await lockAndLoadVenueConfig(this.tx, access, venueId));
      this.configs.set(venueId, config);
    }
    return config;
  }

  /**
   * Takes the chunk's locks up front in the order every writer follows — venue rows, then pacing
   * days (both sorted, so that two imports queue rather than deadlock), then the reservations its
   * externalRefs name — instead of row by row, where a later row's pacing lock would come after
   * reservations already locked and could deadlock with a PATCH of one of them.
   */
  async lockInOrder(rows: readonly CheckedRow[], submittedAt: number): Promise<void> {
    for (const venueId of [...new Set(rows.map((r) => r.venue.id))].sort()) await this.config(venueId);
    const days = new Set<string>();
    for (const { venue, row } of rows) {
      const config = await this.config(venue.id);
      if (hasPacing(config) && timingOf(config, row).startsAt >= submittedAt) days.add(`${venue.id} ${row.serviceDate}`);
    }
    for (const day of [...days].sort()) {
      const [venueId, serviceDate] = day.split(' ');
      await this.dayBookings(venueId, serviceDate, await this.config(venueId));
    }
    await this.existing(rows, '', undefined);
  }

  async dayBookings(venueId: string, serviceDate: string, config: VenueConfig): Promise<Booking[]> {
    const key = `${venueId} ${serviceDate}`;
    let list = this.bookings.get(key);
    if (!list) {
      if (hasPacing(config)) await lockPacingDay(this.tx, venueId, serviceDate);
      // A copy: the loader may hand out its process-wide cached list, which this chunk then changes.
      list = [...(await loadBookings(this.tx, venueId, serviceDate, serviceDate))];
      this.bookings.set(key, list);
    }
    return list;
  }

  /** Records a written reservation in the cached days, replacing its previous state. */
  remember(venueId: string, booking: Booking): void {
    for (const [key, list] of this.bookings) {
      if (!key.startsWith(venueId)) continue;
      const at = list.findIndex((b) => b.id === booking.id);
      if (at >= 0) list.splice(at, 1);
      if (key === `${venueId} ${booking.serviceDate}`) list.push(booking);
    }
  }

  /** The venue's reservation with this externalRef; the chunk's rows are looked up together, on first use. */
  async existing(rows: readonly CheckedRow[], venueId: string, externalRef: string | undefined): Promise<ReservationRow | undefined> {
    if (!this.existingByRef) {
      this.existingByRef = new Map();
      const refsByVenue = new Map<string, string[]>();
      for (const { venue, row } of rows) {
        if (row.externalRef !== undefined) refsByVenue.set(venue.id, [...(refsByVenue.get(venue.id) ?? []), row.externalRef]);
      }
      for (const [venue, refs] of refsByVenue) {
        const found = await this.tx
          .select()
          .from(reservations)
          .where(and(eq(reservations.venueId, venue), inArray(reservations.externalRef, refs)))
          .for('update');
        for (const r of found) this.existingByRef.set(`${venue} ${r.externalRef}`, r);
      }
    }
    return externalRef === undefined ? undefined : this.existingByRef.get(`${venueId} ${externalRef}`);
  }
}

interface Placement {
  serviceDate: string;
  time: string;
  startsAt: Date;
  endsAt: Date;
  seatings: readonly Seating[];
}

/** A past row: at its time, for its length, without a table and without the engine. */
function placePastRow(config: VenueConfig, row: ReservationImportRow): Placement {
  const t = timingOf(config, row);
  return {
    serviceDate: row.serviceDate,
    time: formatMinutes(t.minuteOfService),
    startsAt: new Date(t.startsAt),
    endsAt: new Date(t.startsAt + t.durationMinutes * MINUTE_MS),
    seatings: [],
  };
}

/**
 * A future row through the engine (docs/operations.md "Reservation imports"): its own durationMinutes or the turn-time rule,
 * outside the booking window (the reservation exists already elsewhere). When the engine refuses
 * (closed, no shift, no table, pacing…), the row is still placed at its time, without a table.
 */
function placeFutureRow(
  config: VenueConfig,
  row: ReservationImportRow,
  bookings: readonly Booking[],
  existing: ReservationRow | undefined,
): Placement {
  const now = Date.now();
  const day = new VenueDay(configForRow(config, row), row.serviceDate, bookings, now);
  const evaluation = day.evaluate(row.time, row.partySize, {
    ignoreBookingWindow: true,
    allSeatings: true,
    // An import writes its own rows only: it never moves the parties already booked.
    keepOthersInPlace: true,
    reservationId: existing?.id,
    preferredSeatingId: existing?.tableAssigned ? (existing.tableId ?? existing.tableCombinationId ?? undefined) : undefined,
  });
  if (!evaluation.timing) return placePastRow(config, row);
  return {
    serviceDate: row.serviceDate,
    time: formatMinutes(evaluation.timing.minuteOfService),
    startsAt: new Date(evaluation.timing.startsAt),
    endsAt: new Date(evaluation.timing.endsAt),
    seatings: evaluation.available ? evaluation.seatings : [],
  };
}

interface RowContext {
  checked: CheckedRow;
  existing: ReservationRow | undefined;
  config: VenueConfig;
  past: boolean;
  /** The bookings of the row's day (future rows only). */
  bookings: readonly Booking[];
  keyName: string;
  livemode: boolean;
}

/**
 * Writes one checked row: a new reservation, or the update of the venue's reservation with the
 * same externalRef. Past rows are completed, without a table; future rows are placed by the
 * engine and, when it finds no table, still created with needsAttention. No events, only a
 * history-only row for the reservation's history. Null when a
 * concurrent request took the row's externalRef in the meantime.
 */
async function importRow(
  tx: Tx,
  { checked, existing, config, past, bookings, keyName, livemode }: RowContext,
): Promise<{ outcome: RowOutcome; booking: Booking } | null> {
  const { row, venue, phone } = checked;
  const placement = past ? placePastRow(config, row) : placeFutureRow(config, row, bookings, existing);

  const guest = phone ? await findOrCreateGuest(tx, noEvents, { venue, phone, contact: splitPersonName(row.guestName), livemode }) : null;
  // A name without a phone cannot make a guest (a guest needs a phone): it stays with the notes.
  const notes = guest || !row.guestName ? row.notes : [row.guestName, row.notes].filter(Boolean).join(' — ');
  const fromStatus = existing?.status ?? null;
  // Past rows conclude as completed; an existing reservation already cancelled or no_show keeps that ending.
  const status: ReservationRow['status'] = past
    ? fromStatus === 'cancelled' || fromStatus === 'no_show'
      ? fromStatus
      : 'completed'
    : (fromStatus ?? 'created');
  const seatings = !past && tableHoldingStatuses.has(status) ? placement.seatings : [];
  const first = seatings[0] ?? null;

  const values = {
    serviceDate: placement.serviceDate,
    time: placement.time,
    startsAt: placement.startsAt,
    endsAt: placement.endsAt,
    partySize: row.partySize,
    status,
    ...seatingColumns(first),
    // Still to come and the engine found no table: created anyway, to be arranged on the floor.
    needsAttention: !past && tableHoldingStatuses.has(status) && !first,
    ...(notes !== undefined || !existing ? { notes: notes ?? null } : {}),
    ...(row.channel !== undefined || !existing ? { sourceDetail: row.channel ?? keyName } : {}),
    ...(guest || !existing ? { guestId: guest?.id ?? null } : {}),
    ...(status === 'completed' && fromStatus !== 'completed' ? { completedAt: placement.endsAt } : {}),
  };

  let saved: ReservationRow | undefined;
  if (existing) {
    await deleteOccupancy(tx, existing.id);
    [saved] = await tx
      .update(reservations)
      .set({ ...values, updatedAt: nextUpdatedAt(reservations.updatedAt) })
      .where(eq(reservations.id, existing.id))
      .returning();
  } else {
    // The only unique index a new row can meet is the venue's externalRef.
    [saved] = await tx
      .insert(reservations)
      .values({
        organisationId: venue.organisationId,
        venueId: venue.id,
        source: 'import',
        externalRef: row.externalRef ?? null,
        ...values,
      })
      .onConflictDoNothing()
      .returning();
    if (!saved) return null;
  }

  let seating: Seating | null = null;
  if (first) {
    seating = await occupyFirstFree(tx, { reservationId: saved.id }, venue.id, seatings, placement.startsAt, placement.endsAt, false);
    if (seating !== first) {
      // Another booking took the chosen table meanwhile: the next free one, or none.
      [saved] = await tx
        .update(reservations)
        .set({ ...seatingColumns(seating), needsAttention: seating === null, updatedAt: nextUpdatedAt(reservations.updatedAt) })
        .where(eq(reservations.id, saved.id))
        .returning();
    }
  }
  if (saved.guestId && status !== fromStatus) await applyGuestStatusChange(tx, saved.guestId, fromStatus, status, placement.startsAt);
  // The reservation as the history shows it, from what the row wrote (no read back): its tables
  // from the configuration, its guest as found or kept.
  const kept = guest ?? (saved.guestId ? await getGuestForVenue(tx, venue.id, saved.guestId) : null);
  const parts = { row: saved, tables: seatedTablesOf(config, seating), guest: kept };
  await recordHistoryOnlyEvent(
    tx,
    { ...reservationEventFields(parts, livemode), type: existing ? 'reservation_modified' : 'reservation_created' },
    { kind: 'import', name: keyName },
  );
  return { outcome: { outcome: existing ? 'updated' : 'created' }, booking: bookingOf(saved, seating?.tableIds ?? []) };
}

/** The import processor of kind `reservations`: the rows are judged once, then written chunk by chunk. */
export async function prepareReservationImport(record: ImportRow): Promise<PreparedImport> {
  const checked = await checkRows(record);
  const [key] = await db()
    .select({ name: apiKeys.name, isTest: organisations.isTest })
    .from(apiKeys)
    .innerJoin(organisations, eq(organisations.id, apiKeys.organisationId))
    .where(eq(apiKeys.id, record.apiKeyId));
  const keyName = key?.name ?? 'import';
  const livemode = !key?.isTest;
  const submittedAt = record.createdAt.getTime();
  let state: ChunkState | undefined;
  let chunkRows: CheckedRow[] = [];
  return {
    processRow: async (tx, index) => {
      const check = checked[index];
      if (state?.tx !== tx) {
        // A new chunk: its rows are those from this index on (processNextChunk's chunk size).
        state = new ChunkState(tx, record.organisationId);
        chunkRows = checked.slice(index, index + importChunkSize).filter((c): c is CheckedRow => !('rejected' in c));
        await state.lockInOrder(chunkRows, submittedAt);
      }
      if ('rejected' in check) return check.rejected;
      const config = await state.config(check.venue.id);
      const timing = timingOf(config, check.row);
      if (!isWritableSpan(timing.startsAt, timing.startsAt + timing.durationMinutes * MINUTE_MS)) {
        return {
          outcome: 'rejected',
          code: 'invalid_field',
          message: 'The reservation would not fall within the years 0001 to 9999.',
          fields: ['serviceDate'],
        };
      }
      const past = timing.startsAt < submittedAt;
      const bookings = past ? [] : await state.dayBookings(check.venue.id, check.row.serviceDate, config);
      const existing = await state.existing(chunkRows, check.venue.id, check.row.externalRef);
      const written = await importRow(tx, { checked: check, existing, config, past, bookings, keyName, livemode });
      if (!written)
        return {
          outcome: 'rejected',
          code: 'invalid_field',
          message: 'Another reservation of the venue took this externalRef meanwhile.',
          fields: ['externalRef'],
        };
      state.remember(check.venue.id, written.booking);
      return written.outcome;
    },
  };
}
