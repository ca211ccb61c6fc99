/**
 * Wait quotes and learned turn times on simulated nights (docs/reservations.md "Turn times and wait
 * quotes"). No server: the estimator of src/lib/wait-quotes.ts and the learning of
 * src/lib/learned-turn-times.ts run over nights of a 60-table floor, minute by minute.
 *
 * A night: dinner 17:00–23:00, last seating 21:30. Reservations are booked ahead onto tables with the
 * configured turn times (as the engine does at a venue on its rules), arrive around their time and some
 * never come; walk-ins arrive through the evening and join the waiting list when no table is free for
 * them. Every party stays for a real duration drawn per party size and day of week (log-normal around a
 * median the configured rules only approximate). The host seats the arriving reservations first, then
 * the queue in order, each party at the smallest free table that fits and that no reservation needs
 * before the party is expected to leave.
 *
 * Eight weeks of such nights at 90 % demand are the history the turn times are learned from. Then, per
 * demand level, four weeks of nights: each party that joins the queue is quoted by the estimator (floor
 * now, learned turn times) and by the rule "parties ahead × the configured turn time", both with the same
 * range width (20 minutes or a third of the wait); when it sits, the bench records whether that was inside
 * each range and the error in minutes. Every seated party's predicted end is compared with its real end,
 * with the learned p50 and with the configured rule.
 *
 *   npx tsx bench/wait-quotes.ts [--weeks-per-level 4] [--seed 7]
 */
import { parseArgs } from 'node:util';
import { mulberry32 } from '../test/support/seeded-random.js';
import {
  clampLearnedMinutes,
  indexLearnedCells,
  learnedMinutesOf,
  resolveLearnedCells,
  summariseTurnTimes,
  type TurnTimeSample,
} from '../src/lib/learned-turn-times.js';
import { estimateSeatTimes, seatRange, type FloorNow } from '../src/lib/wait-quotes.js';

const { values: args } = parseArgs({
  options: { 'weeks-per-level': { type: 'string', default: '4' }, seed: { type: 'string', default: '7' } },
});
const weeksPerLevel = Number(args['weeks-per-level']);
const random = mulberry32(Number(args.seed));

const MIN = 60_000;
const OPEN = 0;
const LAST_SEATING = 270;
const CLOSE = 360;
const SHIFT = 'dinner';

interface Table {
  id: string;
  minSeats: number;
  maxSeats: number;
}
// 60 tables, smallest first (the order the host and the estimator try them).
const tables: Table[] = [
  ...Array.from({ length: 24 }, (_, i) => ({ id: `two-${i}`, minSeats: 1, maxSeats: 2 })),
  ...Array.from({ length: 22 }, (_, i) => ({ id: `four-${i}`, minSeats: 2, maxSeats: 4 })),
  ...Array.from({ length: 10 }, (_, i) => ({ id: `six-${i}`, minSeats: 4, maxSeats: 6 })),
  ...Array.from({ length: 4 }, (_, i) => ({ id: `eight-${i}`, minSeats: 6, maxSeats: 8 })),
];
const fits = (t: Table, size: number) => size >= t.minSeats && size <= t.maxSeats;

const sizeWeights: Array<[number, number]> = [
  [1, 5],
  [2, 45],
  [3, 12],
  [4, 22],
  [5, 5],
  [6, 6],
  [7, 2],
  [8, 3],
];
function drawSize(): number {
  let r = random() * 100;
  for (const [size, weight] of sizeWeights) if ((r -= weight) < 0) return size;
  return 2;
}

/** The configured rules: what a manager typed once, the same every day. */
const configuredMinutes = (size: number) => (size <= 2 ? 90 : size <= 4 ? 105 : size <= 6 ? 120 : 150);
/** What parties really do: by size, longer at the weekend, shorter early in the week. */
const realMedian = (size: number, dayOfWeek: number) =>
  (size <= 2 ? 78 : size <= 4 ? 98 : size <= 6 ? 118 : 140) * [0, 0.88, 0.88, 0.92, 0.97, 1.12, 1.18, 1.02][dayOfWeek];
function drawDuration(size: number, dayOfWeek: number): number {
  // Log-normal, σ = 0.2 (Box–Muller).
  const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.max(20, Math.round(realMedian(size, dayOfWeek) * Math.exp(0.2 * z)));
}

/** An arrival minute with the evening's peak around 19:30 (150 minutes after opening). */
function drawArrival(): number {
  const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.min(LAST_SEATING, Math.max(OPEN, Math.round(150 + 60 * z)));
}

interface Party {
  size: number;
  duration: number;
  arrival: number;
  /** A reservation: its time and the table booked for it. */
  booked?: { time: number; tableId: string };
  noShow?: boolean;
  joinedQueueAt?: number;
  quotes?: { learned: Quote | null; rule: Quote };
  seatedAt?: number;
}
interface Quote {
  at: number;
  from: number;
  to: number;
}

interface Seated {
  party: Party;
  tableId: string;
  end: number;
}

type TurnLookup = (size: number, dayOfWeek: number) => { p50: number; p80?: number };

/** Bookings ahead: the first table free for the configured turn time at the asked time, else turned away. */
function bookReservations(count: number): Party[] {
  const busy = new Map<string, Array<[number, number]>>(tables.map((t) => [t.id, []]));
  const booked: Party[] = [];
  for (let i = 0; i < count; i++) {
    const size = drawSize();
    const time = Math.min(LAST_SEATING, Math.round(drawArrival() / 15) * 15);
    const end = time + configuredMinutes(size);
    const table = tables.find((t) => fits(t, size) && busy.get(t.id)!.every(([s, e]) => e <= time || s >= end));
    if (!table) continue;
    busy.get(table.id)!.push([time, end]);
    booked.push({ size, duration: 0, arrival: time, booked: { time, tableId: table.id } });
  }
  return booked;
}

interface NightResult {
  quotes: Array<{ learned: Quote | null; rule: Quote; seatedAt: number | undefined; joinedAt: number }>;
  ends: Array<{ size: number; seatedAt: number; end: number }>;
}

/**
 * One night at `demand` (1 = the parties the floor seats at the configured turn times), quoting with
 * `learnedTurn` when given.
 */
function simulateNight(dayOfWeek: number, demand: number, learnedTurn: TurnLookup | null): NightResult {
  const parties = Math.round(demand * 175);
  const reservations = bookReservations(Math.round(parties * 0.6));
  for (const r of reservations) {
    r.duration = drawDuration(r.size, dayOfWeek);
    r.arrival = r.booked!.time + Math.round(-5 + random() * 15);
    r.noShow = random() < 0.05;
  }
  const walkIns: Party[] = Array.from({ length: parties - reservations.length }, () => {
    const size = drawSize();
    return { size, duration: drawDuration(size, dayOfWeek), arrival: drawArrival() };
  });
  const hostTurn = (size: number) => (learnedTurn ? learnedTurn(size, dayOfWeek).p50 : configuredMinutes(size));
  const seated = new Map<string, Seated>();
  const queue: Party[] = [];
  const waitingReservations: Party[] = [];
  const result: NightResult = { quotes: [], ends: [] };
  const pendingReservations = [...reservations].sort((a, b) => a.arrival - b.arrival);

  /**
   * The reservations still expected: arrived and waiting for their table, or not yet come and less than
   * 15 minutes late (nobody knows a no-show in advance: its table is kept for it until then).
   */
  const expected = (now: number) => [
    ...waitingReservations,
    ...pendingReservations.filter((r) => r.seatedAt === undefined && now < r.booked!.time + 15),
  ];
  /** Whether an expected reservation needs the table before `until`. */
  const neededBefore = (tableId: string, now: number, until: number) =>
    expected(now).some((r) => r.booked!.tableId === tableId && r.booked!.time < until);
  const freeTable = (size: number, now: number, forReservation: Party | null) =>
    tables.find(
      (t) =>
        fits(t, size) &&
        !seated.has(t.id) &&
        (forReservation ? true : !neededBefore(t.id, now, now + hostTurn(size))) &&
        // A reservation's own table first: another's only when it is not needed before this one leaves.
        (forReservation === null || t.id === forReservation.booked!.tableId || !neededBefore(t.id, now, now + hostTurn(size))),
    );
  const seat = (party: Party, table: Table, now: number) => {
    party.seatedAt = now;
    seated.set(table.id, { party, tableId: table.id, end: now + party.duration });
    result.ends.push({ size: party.size, seatedAt: now, end: now + party.duration });
  };
  const floorNow = (now: number): FloorNow => ({
    now: now * MIN,
    opensAt: OPEN * MIN,
    lastSeatingAt: LAST_SEATING * MIN,
    seatings: tables.map((t) => ({ tableIds: [t.id], minSeats: t.minSeats, maxSeats: t.maxSeats, isBlocked: false })),
    seated: [...seated.values()].map((s) => ({ tableIds: [s.tableId], partySize: s.party.size, seatedAt: s.party.seatedAt! * MIN })),
    due: expected(now).map((r) => ({ tableIds: [r.booked!.tableId], partySize: r.size, startsAt: r.booked!.time * MIN })),
    turnMinutes: (size) => learnedTurn!(size, dayOfWeek),
  });

  for (let now = OPEN; now <= CLOSE; now++) {
    for (const [tableId, s] of seated) if (s.end <= now) seated.delete(tableId);
    while (pendingReservations.length && pendingReservations[0].arrival <= now) {
      const r = pendingReservations.shift()!;
      if (!r.noShow) waitingReservations.push(r);
    }
    // Reservations first: their own table, else another free one that fits.
    for (const r of [...waitingReservations]) {
      const own = tables.find((t) => t.id === r.booked!.tableId)!;
      const table = !seated.has(own.id) ? own : freeTable(r.size, now, r);
      if (table) {
        seat(r, table, now);
        waitingReservations.splice(waitingReservations.indexOf(r), 1);
      }
    }
    for (const w of walkIns) {
      if (w.arrival !== now) continue;
      const table = queue.length === 0 && now <= LAST_SEATING ? freeTable(w.size, now, null) : undefined;
      if (table) {
        seat(w, table, now);
        continue;
      }
      if (now > LAST_SEATING) continue;
      w.joinedQueueAt = now;
      const ahead = queue.length;
      const ruleAt = (now + ahead * configuredMinutes(w.size)) * MIN;
      const rule = { at: ruleAt, ...seatRange(now * MIN, ruleAt) };
      let learned: Quote | null = null;
      if (learnedTurn) {
        const [estimate] = estimateSeatTimes(
          floorNow(now),
          queue.map((q) => q.size),
          [w.size],
        ).asking;
        if (estimate.estimatedSeatTime) learned = { at: estimate.seatAt, ...estimate.estimatedSeatTime };
      }
      w.quotes = { learned, rule };
      queue.push(w);
    }
    if (now <= LAST_SEATING) {
      for (const q of [...queue]) {
        const table = freeTable(q.size, now, null);
        if (table) {
          seat(q, table, now);
          queue.splice(queue.indexOf(q), 1);
        }
      }
    }
  }
  for (const w of walkIns) {
    if (w.quotes) result.quotes.push({ ...w.quotes, seatedAt: w.seatedAt, joinedAt: w.joinedQueueAt! });
  }
  return result;
}

// History: eight weeks at 90 % demand, on the rules, as learned_turn_times would read it.
const history: TurnTimeSample[] = [];
for (let week = 0; week < 8; week++) {
  for (let day = 1; day <= 7; day++) {
    for (const e of simulateNight(day, 0.9, null).ends) {
      history.push({ shiftId: SHIFT, dayOfWeek: day, partySize: e.size, minutes: e.end - e.seatedAt });
    }
  }
}
const cells = indexLearnedCells(
  resolveLearnedCells(summariseTurnTimes(history), [{ id: SHIFT, daysOfWeek: [1, 2, 3, 4, 5, 6, 7] }], (_s, size) =>
    configuredMinutes(size),
  ),
);
const learnedTurn: TurnLookup = (size, day) =>
  learnedMinutesOf(cells, SHIFT, day, size) ?? { p50: clampLearnedMinutes(configuredMinutes(size)) };

const pct = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(0)} %` : '—');
const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);

console.log(`history: ${history.length} parties over 8 weeks; ${weeksPerLevel} weeks of nights per demand level, seed ${args.seed}`);
console.log(
  '| demand | queued parties | quoted a time | of them not seated by the last seating | seated inside range: learned | rule | MAE min: learned | rule | learned vs rule | predicted end MAE min: learned | configured |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const demand of [0.6, 0.8, 0.95, 1.1, 1.3]) {
  const quotes: NightResult['quotes'] = [];
  const endErrors = { learned: [] as number[], configured: [] as number[] };
  for (let week = 0; week < weeksPerLevel; week++) {
    for (let day = 1; day <= 7; day++) {
      const night = simulateNight(day, demand, learnedTurn);
      quotes.push(...night.quotes);
      for (const e of night.ends) {
        endErrors.learned.push(Math.abs(e.seatedAt + learnedTurn(e.size, day).p50 - e.end));
        endErrors.configured.push(Math.abs(e.seatedAt + configuredMinutes(e.size) - e.end));
      }
    }
  }
  // A party never seated counts as outside its range, its error up to the close.
  const seatedAt = (q: NightResult['quotes'][number]) => (q.seatedAt ?? CLOSE) * MIN;
  const quotedLearned = quotes.filter((q) => q.learned);
  const inside = (quote: Quote, q: NightResult['quotes'][number]) =>
    q.seatedAt !== undefined && quote.from <= seatedAt(q) && seatedAt(q) <= quote.to;
  const error = (quote: Quote, q: NightResult['quotes'][number]) => Math.abs(seatedAt(q) - quote.at) / MIN;
  const maeLearned = mean(quotedLearned.map((q) => error(q.learned!, q)));
  const maeRule = mean(quotedLearned.map((q) => error(q.rule, q)));
  console.log(
    `| ${(demand * 100).toFixed(0)} % | ${quotes.length} | ${quotedLearned.length} | ${quotedLearned.filter((q) => q.seatedAt === undefined).length} | ${pct(quotedLearned.filter((q) => inside(q.learned!, q)).length, quotedLearned.length)} | ` +
      `${pct(quotedLearned.filter((q) => inside(q.rule, q)).length, quotedLearned.length)} | ${maeLearned.toFixed(1)} | ${maeRule.toFixed(1)} | ` +
      `${quotedLearned.length ? `${((1 - maeLearned / maeRule) * 100).toFixed(0)} % lower` : '—'} | ` +
      `${mean(endErrors.learned).toFixed(1)} | ${mean(endErrors.configured).toFixed(1)} |`,
  );
}
