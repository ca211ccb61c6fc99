import type { TurnTimeStats } from '../learned-turn-times.js';
import type { ClosureSchedule, ShiftSchedule } from '../shift-schedule.js';

export const reservationStatuses = ['created', 'confirmed', 'arrived', 'seated', 'released', 'completed', 'no_show', 'cancelled'] as const;
export type ReservationStatus = (typeof reservationStatuses)[number];

/** The reasons of docs/api.md "Requests" the engine itself can answer (conflict is a race lost in PostgreSQL). */
export type UnavailableReason =
  'closed' | 'no_shift' | 'after_last_seating' | 'no_turn_time_rule' | 'no_table' | 'pacing_full' | 'table_blocked';

export interface VenueSettings {
  timezone: string;
  slotIntervalMinutes: number;
  bookingHorizonDays: number;
  minNoticeMinutes: number;
  /** docs/reservations.md "Table optimisation": whether other parties may be moved to seat a booking. */
  tableOptimisation: boolean;
  /**
   * docs/reservations.md "Turn times and wait quotes": `learned` takes a party's turn time from the
   * venue's learned p50 (VenueConfig.learnedTurnTimes) where its cell has enough samples. Absent: configured.
   */
  turnTimeSource?: TurnTimeSource;
}

export type TurnTimeSource = 'configured' | 'learned';

export interface TurnTimeRule {
  id: string;
  /** null: venue-wide. */
  shiftId: string | null;
  minPartySize: number;
  maxPartySize: number;
  durationMinutes: number;
}

export interface PacingRule {
  id: string;
  shiftId: string;
  isEnabled: boolean;
  maxCovers: number;
  windowMinutes: number;
}

/** A table of the active floor plan (deleted tables are not passed in). */
export interface FloorTable {
  id: string;
  name: string;
  areaId: string;
  areaPosition: number;
  minSeats: number;
  maxSeats: number;
  isBlocked: boolean;
}

export interface TableCombination {
  id: string;
  tableIds: readonly string[];
}

/** Everything about a venue the engine needs, as loaded from its configuration. */
export interface VenueConfig {
  venue: VenueSettings;
  shifts: readonly ShiftSchedule[];
  closures: readonly ClosureSchedule[];
  turnTimeRules: readonly TurnTimeRule[];
  /** The venue's learned figures (null or absent: none learned yet). */
  learnedTurnTimes?: TurnTimeStats | null;
  pacingRules: readonly PacingRule[];
  tables: readonly FloorTable[];
  combinations: readonly TableCombination[];
}

/** An existing reservation as the engine sees it. */
export interface Booking {
  id: string;
  serviceDate: string;
  /** HH:mm, venue local. */
  time: string;
  partySize: number;
  status: ReservationStatus;
  startsAt: number;
  endsAt: number;
  /** Tables it holds right now (its live occupancy); empty when none. */
  tableIds: readonly string[];
  /** A slot hold (docs/reservations.md "Slot holds"), seen as a `created` booking until this instant, as nothing from then on. */
  expiresAt?: number;
  /** Its table was chosen explicitly (or it is a slot hold): the table optimiser never moves it. Absent: false. */
  tableLocked?: boolean;
}

/** A time offered to a guest (docs/api.md Proposal). */
export interface Proposal {
  time: string;
  startsAt: string;
  endsAt: string;
  turnTimeMinutes: number;
  seats: number;
  overflowsShift: boolean;
}
