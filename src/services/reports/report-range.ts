import { z } from 'zod';
import { isoDate } from '../../core/validation.js';
import { daysBetween } from '../../lib/local-time.js';

/** Reports and exports cover at most a year of serviceDates, both ends included. */
export const maxReportDays = 366;

export const venueRangeFields = { venueId: z.uuid(), from: isoDate, to: isoDate };

/** Refinement of a query with `from` and `to` (serviceDates, inclusive): `to` before `from`, or over 366 days, is a 400 naming `to`. */
export function checkReportRange(q: { from: string; to: string }, ctx: z.RefinementCtx): void {
  // Runs even when a date failed its own check, which has named it already.
  if (!isoDate.safeParse(q.from).success || !isoDate.safeParse(q.to).success) return;
  const days = daysBetween(q.from, q.to) + 1;
  if (days < 1) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from' });
  else if (days > maxReportDays) ctx.addIssue({ code: 'custom', path: ['to'], message: `the range is at most ${maxReportDays} days` });
}
