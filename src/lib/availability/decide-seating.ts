import type { Seating } from './seatings.js';
import type { TableMove } from './table-optimiser.js';
import type { UnavailableReason } from './types.js';
import type { Evaluation, Timing } from './venue-day.js';

/**
 * What a booking does with the engine's answer (docs/reservations.md): `seat` at the first of
 * `seatings` after the parties of `moves` have moved; `force`, booked anyway without a table, to be
 * arranged on the floor (only when asked to and the refusal is about tables or pacing, not about the
 * time); `refuse` with the engine's reason.
 */
export type SeatingDecision =
  | { kind: 'seat'; timing: Timing; seatings: readonly Seating[]; moves: readonly TableMove[] }
  | { kind: 'force'; timing: Timing }
  | { kind: 'refuse'; reason: UnavailableReason };

/** The refusals that `force` overrides: the time is bookable, the tables or the pacing block are not. */
const forceable: ReadonlySet<UnavailableReason> = new Set<UnavailableReason>(['no_table', 'pacing_full']);

/** The booking's decision from the engine's evaluation and whether the caller forces it. */
export function decideSeating(evaluation: Evaluation, force: boolean): SeatingDecision {
  if (evaluation.available) return { kind: 'seat', timing: evaluation.timing, seatings: evaluation.seatings, moves: evaluation.moves };
  if (force && evaluation.timing && forceable.has(evaluation.reason)) return { kind: 'force', timing: evaluation.timing };
  return { kind: 'refuse', reason: evaluation.reason };
}
