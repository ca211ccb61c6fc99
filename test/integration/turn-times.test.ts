import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { db } from '../../src/db/client.js';
import { learnedTurnTimes, reservations } from '../../src/db/schema/index.js';
import { closeQueues } from '../../src/queues/queues.js';
import { createEventJobHandler } from '../../src/roles/event-handler.js';
import { eventJob, type EventJob } from '../../src/jobs/event-job.js';
import { handleImportJob } from '../../src/roles/import-handler.js';
import { importJob, type ImportJob } from '../../src/jobs/import-job.js';
import { startJobWorker, type RunningWorker } from '../../src/queues/start-worker.js';
import { learnStaleTurnTimes } from '../../src/services/turn-times/learned-turn-times.js';
import { isoDayOfWeek } from '../../src/lib/shift-schedule.js';
import { eventually } from '../support/eventually.js';
import { client, createKey, createTenant, useTestServer, type Client } from '../support/harness.js';
import { waitForImport } from '../support/imports.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: this file's workers handle exactly the imports and events it waits for.
const config = useOwnQueuePrefix('tt');

const server = useTestServer();
let eventsWorker: RunningWorker<EventJob>;
let importsWorker: RunningWorker<ImportJob>;
beforeAll(() => {
  eventsWorker = startJobWorker(eventJob, createEventJobHandler(config), { concurrency: 5 });
  importsWorker = startJobWorker(importJob, handleImportJob, { concurrency: 2 });
});
afterAll(async () => {
  await eventsWorker.close();
  await importsWorker.close();
  await closeQueues();
});

const MIN = 60_000;
const median = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return (s[Math.floor((s.length - 1) / 2)] + s[Math.ceil((s.length - 1) / 2)]) / 2;
};

/** A fixed-offset zone where it is now between 12:00 and 13:00: the all-day shift below is open whenever the test runs. */
function middayZone(): string {
  const offset = 12 - new Date().getUTCHours();
  return offset === 0 ? 'Etc/GMT' : offset > 0 ? `Etc/GMT-${offset}` : `Etc/GMT+${-offset}`;
}

const allDay = { name: 'All day', startTime: '06:00', lastSeatingTime: '20:00', endTime: '22:00' };

describe('learned turn times', () => {
  it('learn the medians of imported history (±2 minutes) per band, shift and day, and fall back below 12 samples', async () => {
    const t = await createTenant();
    const fixture = await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    // Day D: the weekday a week ago; D+1 the day after it. Seven weeks of each, all inside the 8 weeks.
    const weeks = [1, 2, 3, 4, 5, 6, 7];
    const couples = [62, 75, 80, 84, 88, 90, 91, 93, 97, 101, 104, 110, 118, 125];
    const rows: Array<Record<string, unknown>> = [];
    const row = (date: string, partySize: number, durationMinutes: number) =>
      rows.push({ venueId: t.venueId, serviceDate: date, time: '19:30', partySize, durationMinutes, externalRef: `h-${rows.length}` });
    weeks.forEach((w, i) => {
      row(localDate(-7 * w), 2, couples[2 * i]);
      row(localDate(-7 * w), 1, couples[2 * i + 1]);
    });
    // Band 3–4: 5 on D (100 min) and 8 on D+1 (140 min): 13 over all days.
    for (const w of weeks.slice(0, 5)) row(localDate(-7 * w), 4, 100);
    for (const w of [...weeks, 8].slice(0, 8)) row(localDate(-7 * w + 1), 3, 140);
    // Band 5–6: 3 in all: the configured rule (120) stands.
    for (const w of weeks.slice(0, 3)) row(localDate(-7 * w), 6, 60);
    // Older than 8 weeks: not learned from.
    for (const w of [10, 11, 12]) row(localDate(-7 * w), 2, 400);

    const submitted = await api.post('/imports/reservations', { rows });
    expect(submitted.status).toBe(202);
    expect((await waitForImport(api, submitted.body.import.id)).status).toBe('completed');
    expect(await learnStaleTurnTimes()).toBeGreaterThanOrEqual(1);
    expect(await db().select().from(learnedTurnTimes).where(eq(learnedTurnTimes.venueId, t.venueId))).toHaveLength(1);

    const learned = await api.get(`/venues/${t.venueId}/turn-times/learned`);
    expect(learned.status).toBe(200);
    expect(learned.body).toMatchObject({ venueId: t.venueId, turnTimeSource: 'configured' });
    const day = isoDayOfWeek(localDate(-7));
    const cell = (dayOfWeek: number, partySizeMin: number) =>
      learned.body.cells.find(
        (c: { dayOfWeek: number; partySizeMin: number; shiftId: string }) =>
          c.dayOfWeek === dayOfWeek && c.partySizeMin === partySizeMin && c.shiftId === fixture.shiftIds[0],
      );
    expect(learned.body.cells).toHaveLength(7 * 4);
    const couplesCell = cell(day, 1);
    expect(couplesCell).toMatchObject({ partySizeMax: 2, samples: 14, borrowed: null });
    expect(Math.abs(couplesCell.p50Minutes - median(couples))).toBeLessThanOrEqual(2);
    expect(couplesCell.p80Minutes).toBeGreaterThan(couplesCell.p50Minutes);
    expect(cell(day, 3)).toMatchObject({ partySizeMax: 4, samples: 5, borrowed: 'all_days', p50Minutes: 140 });
    expect(cell(day, 5)).toMatchObject({ samples: 3, borrowed: 'configured', p50Minutes: 120, p80Minutes: 120 });
    expect(cell(day, 7)).toMatchObject({ partySizeMax: null, samples: 0, borrowed: 'configured', p50Minutes: 120 });
    // Another day's couples: 0 of their own, 14 on all days.
    expect(cell((day % 7) + 1, 1)).toMatchObject({ samples: 0, borrowed: 'all_days' });

    // The venue switches to learned: availability takes the p50 and says so; imports of durations still rule their rows.
    const patched = await api.patch(`/venues/${t.venueId}`, { turnTimeSource: 'learned' });
    expect(patched.body.venue.turnTimeSource).toBe('learned');
    const slots = (party: number) =>
      api.get(`/availability/slots?venueId=${t.venueId}&serviceDate=${localDate(7)}&partySize=${party}&include=unavailable`);
    const couplesSlot = (await slots(2)).body.data.find((s: { time: string }) => s.time === '19:00');
    expect(couplesSlot).toMatchObject({ available: true, turnTimeSource: 'learned', turnTimeMinutes: couplesCell.p50Minutes });
    const sixSlot = (await slots(6)).body.data.find((s: { time: string }) => s.time === '19:00');
    expect(sixSlot).toMatchObject({ available: true, turnTimeSource: 'configured', turnTimeMinutes: 120 });
    const booked = await api.post('/reservations', { venueId: t.venueId, serviceDate: localDate(7), time: '19:00', partySize: 2 });
    expect(booked.status).toBe(201);
    expect(Date.parse(booked.body.reservation.endsAt) - Date.parse(booked.body.reservation.startsAt)).toBe(couplesCell.p50Minutes * MIN);

    // Back to the rules.
    await api.patch(`/venues/${t.venueId}`, { turnTimeSource: 'configured' });
    expect((await slots(2)).body.data.find((s: { time: string }) => s.time === '19:00')).toMatchObject({
      turnTimeSource: 'configured',
      turnTimeMinutes: 90,
    });
    expect((await api.patch(`/venues/${t.venueId}`, { turnTimeSource: 'guessed' })).body.error.details.fields).toEqual(['turnTimeSource']);
  });
});

describe('wait quotes', () => {
  /** Two two-tops and a four-top, all taken: A seated 30 min ago, B 50 min ago (90 min turns), the four-top just now. */
  async function busyFloor() {
    const timezone = middayZone();
    const t = await createTenant({ venue: { timezone } });
    const fixture = await configureVenue(t.venueId, {
      shifts: [allDay],
      tables: [
        { name: 'A', minSeats: 1, maxSeats: 2 },
        { name: 'B', minSeats: 1, maxSeats: 2 },
        { name: 'C', minSeats: 2, maxSeats: 4 },
      ],
    });
    const api = client(server.url, t.key);
    const seat = async (table: string, partySize: number, minutesAgo: number) => {
      const created = await api.post('/reservations', {
        venueId: t.venueId,
        partySize,
        source: 'walk_in',
        tableId: fixture.tableIds[table],
      });
      expect(created.status).toBe(201);
      const id = created.body.reservation.id;
      expect((await api.patch(`/reservations/${id}`, { status: 'seated' })).status).toBe(200);
      // The floor as it stands: the party sat down earlier than this test.
      await db()
        .update(reservations)
        .set({ seatedAt: new Date(Date.now() - minutesAgo * MIN) })
        .where(eq(reservations.id, id));
      return id;
    };
    const now = Date.now();
    const ids = { A: await seat('A', 2, 30), B: await seat('B', 2, 50), C: await seat('C', 4, 0) };
    return { ...t, api, ids, timezone, endOfB: now + 40 * MIN };
  }

  const quote = (api: Client, venueId: string, sizes: number[], headers?: Record<string, string>) =>
    api.get(`/waitlist/quote?venueId=${venueId}${sizes.map((s) => `&partySize=${s}`).join('')}`, headers);

  it('names the first expected end when every two-top is seated until known times, per asked size', async () => {
    const { api, venueId, endOfB } = await busyFloor();
    const res = await quote(api, venueId, [2, 4, 30]);
    expect(res.status).toBe(200);
    const [couple, four, crowd] = res.body.quotes;
    expect(couple).toMatchObject({ partySize: 2, partiesAhead: 0 });
    expect(Math.abs(couple.estimatedWaitMinutes - 40)).toBeLessThanOrEqual(1);
    expect(Date.parse(couple.estimatedSeatTime.from)).toBeLessThanOrEqual(endOfB + MIN);
    expect(Date.parse(couple.estimatedSeatTime.to)).toBeGreaterThanOrEqual(endOfB - MIN);
    expect(Date.parse(couple.estimatedSeatTime.to) - Date.parse(couple.estimatedSeatTime.from)).toBe(20 * MIN);
    expect(Math.abs(four.estimatedWaitMinutes - 90)).toBeLessThanOrEqual(1);
    expect(crowd).toEqual({
      partySize: 30,
      partiesAhead: 0,
      estimatedSeatTime: null,
      estimatedWaitMinutes: null,
      reason: 'after_last_seating',
    });

    expect((await quote(api, venueId, [1, 2, 3, 4, 5, 6, 7, 8, 9])).body.error.details.fields).toEqual(['partySize']);
    expect((await quote(api, venueId, [])).status).toBe(400);
  });

  it("moves a waiting entry's estimate when a party completes, recomputed by worker-events", async () => {
    const { api, venueId, ids } = await busyFloor();
    const joined = await api.post('/waitlist', { venueId, partySize: 2, name: 'Ada', quotedWaitMinutes: 15 });
    expect(joined.status).toBe(201);
    const entryId = joined.body.entry.id;
    const estimated = await eventually(async () => {
      const entry = (await api.get(`/waitlist/${entryId}`)).body.entry;
      return entry.estimatedWaitMinutes !== null && entry;
    });
    expect(Math.abs(estimated.estimatedWaitMinutes - 40)).toBeLessThanOrEqual(1);
    expect(estimated.quotedWaitMinutes).toBe(15);
    // A second party asking now is behind the entry: the second two-top.
    const behind = (await quote(api, venueId, [2])).body.quotes[0];
    expect(behind.partiesAhead).toBe(1);
    expect(Math.abs(behind.estimatedWaitMinutes - 60)).toBeLessThanOrEqual(1);

    expect((await api.patch(`/reservations/${ids.B}`, { status: 'completed' })).status).toBe(200);
    const moved = await eventually(async () => {
      const entry = (await api.get(`/waitlist/${entryId}`)).body.entry;
      return entry.estimatedWaitMinutes === 0 && entry;
    });
    expect(Date.parse(moved.estimatedSeatTime.from)).toBeLessThanOrEqual(Date.now());
    expect(moved.quotedWaitMinutes).toBe(15);
  });

  it('answers publishable keys from their allowed origins, under their own scope rules', async () => {
    const { organisationId, venueId } = await busyFloor();
    const widget = client(server.url, await createKey(organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] }));
    const allowed = await quote(widget, venueId, [2], { origin: 'https://shop.example' });
    expect(allowed.status).toBe(200);
    expect(Math.abs(allowed.body.quotes[0].estimatedWaitMinutes - 40)).toBeLessThanOrEqual(1);
    expect((await quote(widget, venueId, [2], { origin: 'https://evil.example' })).body.error.details.reason).toBe('origin_not_allowed');
    const noScope = client(server.url, await createKey(organisationId, { scopes: ['venues:read'] }));
    expect((await quote(noScope, venueId, [2])).status).toBe(403);
  });
});
