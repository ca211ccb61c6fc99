import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { reservations } from '../../src/db/schema/index.js';
import { DEMAND_HISTORY_DAYS, defaultDemandCurve, type DemandCurve } from '../../src/lib/availability/demand-curve.js';
import { addDays, localToInstant } from '../../src/lib/local-time.js';
import { loadDemandCurve } from '../../src/services/availability/venue-day-loader.js';
import { createTenant, type Tenant } from '../support/harness.js';

/** docs/reservations.md "Which table": a venue's demand curve, learned from its own reservations in PostgreSQL. */

const DAY_MS = 86_400_000;
const zone = 'Europe/Rome';
// Noon UTC: the curve's days are UTC days, and every date below is one away from any edge.
const now = Date.parse(`${new Date().toISOString().slice(0, 10)}T12:00:00Z`);
const today = new Date(now).toISOString().slice(0, 10);

async function insertReservations(
  t: Tenant,
  rows: [serviceDate: string, time: string, partySize: number, status?: 'cancelled' | 'no_show'][],
) {
  await db()
    .insert(reservations)
    .values(
      rows.map(([serviceDate, time, partySize, status]) => {
        const startsAt = localToInstant(zone, serviceDate, Number(time.slice(0, 2)) * 60 + Number(time.slice(3)));
        return {
          organisationId: t.organisationId,
          venueId: t.venueId,
          serviceDate,
          time,
          startsAt: new Date(startsAt),
          endsAt: new Date(startsAt + 90 * 60_000),
          partySize,
          status: status ?? ('completed' as const),
          source: 'api' as const,
        };
      }),
    );
}

const plain = (curve: DemandCurve) =>
  Object.fromEntries([...curve.partiesBySize].map(([size, byTime]) => [size, Object.fromEntries(byTime)]));

describe('loadDemandCurve', () => {
  it('learns parties per night by size and time from the last 28 days of the venue, cancellations aside', async () => {
    const t = await createTenant();
    const other = await createTenant();
    await insertReservations(t, [
      // Two nights of history.
      [addDays(today, -1), '19:00', 2],
      [addDays(today, -1), '19:00', 2],
      [addDays(today, -1), '20:30', 4],
      [addDays(today, -DEMAND_HISTORY_DAYS), '19:00', 2],
      // A no-show was demand all the same.
      [addDays(today, -DEMAND_HISTORY_DAYS), '20:30', 6, 'no_show'],
      // Not counted: cancelled, older than the history, today and later.
      [addDays(today, -1), '19:00', 8, 'cancelled'],
      [addDays(today, -DEMAND_HISTORY_DAYS - 1), '19:00', 2],
      [today, '19:00', 2],
      [addDays(today, 3), '19:00', 2],
    ]);
    await insertReservations(other, [[addDays(today, -1), '19:00', 2]]);

    const curve = await loadDemandCurve(db(), t.venueId, now);
    expect(plain(curve)).toEqual({ 2: { '19:00': 1.5 }, 4: { '20:30': 0.5 }, 6: { '20:30': 0.5 } });
  });

  it('gives a venue without history the default curve', async () => {
    const t = await createTenant();
    await insertReservations(t, [[addDays(today, 2), '19:00', 2]]);
    expect(await loadDemandCurve(db(), t.venueId, now)).toBe(defaultDemandCurve);
  });

  it('is read once per venue and day: a reservation added to the history shows from the next day', async () => {
    const t = await createTenant();
    await insertReservations(t, [[addDays(today, -2), '19:00', 2]]);
    const first = await loadDemandCurve(db(), t.venueId, now);
    await insertReservations(t, [[addDays(today, -2), '19:00', 2]]);
    expect(await loadDemandCurve(db(), t.venueId, now + 60_000)).toBe(first);
    const tomorrow = await loadDemandCurve(db(), t.venueId, now + DAY_MS);
    expect(plain(tomorrow)).toEqual({ 2: { '19:00': 2 } });
  });
});
